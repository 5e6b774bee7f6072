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
        let text = write_interrupts(&report);
        assert!(text.starts_with(expected), "{text}");
        // A blank line ends the table.
        assert_eq!(&text[expected.len()..expected.len() + 1], "\n", "{text}");
    }

    #[test]
    fn labels_are_right_aligned_to_the_longest_and_short_chips_padded() {
        let mut report = report(vec![]);
        report.cpu_time.truncate(1);
        report.interrupts = vec![
            InterruptRow { label: "9".into(), per_cpu: vec![(0, 7)], chip: "IO-APIC".into(), name: "acpi".into() },
            InterruptRow {
                label: "12345".into(),
                per_cpu: vec![(0, 4_294_967_295)],
                chip: "PCI-MSI".into(),
                name: "nvme0q1".into(),
            },
            // No CPU counted it: every CPU shows 0.
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
        assert!(write_interrupts(&report).starts_with(expected));
    }

    #[test]
    fn cpu_count_comes_from_the_report() {
        let mut report = report(vec![]);
        report.cpu_time.push(Default::default());
        let text = write_interrupts(&report);
        assert!(text.starts_with("           CPU0       CPU1       CPU2       \n"), "{text}");
        assert!(text.contains("146:      20000          0          0  IR-PCI"), "{text}");
    }

    #[test]
    fn after_the_table_each_device_shows_its_msis_and_handler_runs_per_io() {
        let mut report = report(vec![]);
        report.disks[0].msis = 8_000;
        report.disks[0].irq_handler_runs = 5_000;
        report.invariants.ios_issued = 20_000;
        report.invariants.ios_reaped = 20_000;
        report.invariants.msi.sent = 8_000;
        report.invariants.msi.delivered = 4_990;
        report.invariants.msi.merged = 3_000;
        report.invariants.msi_pending = 10;
        let text = write_interrupts(&report);
        let summary = text.split("\n\n").nth(1).expect("a summary after a blank line");
        assert_eq!(
            summary,
            concat!(
                "device      requests     MSIs         handler runs  per MSI       per run\n",
                "nvme0n1     20000        8000         5000          2.50          4.00\n",
                "exactly once: I/Os issued 20000, reaped 20000, requests live 0; MSIs sent 8000 = handled 4990 + merged 3000 + pending 10\n",
            )
        );
    }
}
