//! The `/proc/interrupts`-style table, column for column as the kernel prints it.

mod output_support;

use blksim::stats::InterruptRow;
use blksim_fio::output::write_interrupts;
use output_support::*;

mod interrupts_output {
    use super::*;

    #[test]
    fn table_matches_proc_interrupts_layout() {
        let report = report(vec![]);
        let expected = concat!(
            "           CPU0       CPU1       \n",
            "145:          0          0  IR-PCI-MSIX-0000:01:00.0  nvme0q0\n",
            "146:      20000          0  IR-PCI-MSIX-0000:01:00.0  nvme0q1\n",
            "PMN:          0          0   Posted MSI notification event\n",
        );
        assert_eq!(write_interrupts(&report), expected);
    }

    #[test]
    fn labels_are_right_aligned_to_the_longest_and_short_chips_padded() {
        let mut report = report(vec![]);
        report.cpu_time.truncate(1);
        report.interrupts = vec![
            InterruptRow { label: "9".into(), per_cpu: vec![7], chip: "IO-APIC".into(), name: "acpi".into() },
            InterruptRow {
                label: "12345".into(),
                per_cpu: vec![4_294_967_295],
                chip: "PCI-MSI".into(),
                name: "nvme0q1".into(),
            },
            // Fewer counts than CPUs: the missing CPUs show 0.
            InterruptRow {
                label: "LOC".into(),
                per_cpu: vec![],
                chip: String::new(),
                name: "Local timer interrupts".into(),
            },
        ];
        let expected = concat!(
            "             CPU0       \n",
            "    9:          7   IO-APIC  acpi\n",
            "12345: 4294967295   PCI-MSI  nvme0q1\n",
            "  LOC:          0   Local timer interrupts\n",
        );
        assert_eq!(write_interrupts(&report), expected);
    }

    #[test]
    fn cpu_count_comes_from_the_report() {
        let mut report = report(vec![]);
        report.cpu_time.push(Default::default());
        let text = write_interrupts(&report);
        assert!(text.starts_with("           CPU0       CPU1       CPU2       \n"), "{text}");
        assert!(text.contains("146:      20000          0          0  IR-PCI"), "{text}");
    }
}
