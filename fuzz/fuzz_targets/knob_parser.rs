//! Kernel knobs: the input's lines as a kernel command line, a sysfs/procfs
//! write, a timed write (`--at`) and a CPU list. Each is accepted or refused
//! with a message; never a panic.
#![no_main]

use blksim::settings::{parse_cpu_list, parse_timed_write, Settings};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    let devices: Vec<String> = ["nvme0n1", "nvme1n1", "nullb0"].iter().map(|d| d.to_string()).collect();
    let mut settings = Settings::default();
    if let Some(cmdline) = lines.next() {
        let _ = settings.apply_cmdline(cmdline);
    }
    if let Some(write) = lines.next() {
        let _ = settings.apply_write(write, &devices);
    }
    if let Some(at) = lines.next() {
        let _ = parse_timed_write(at);
    }
    if let Some(list) = lines.next() {
        if let Ok(cpus) = parse_cpu_list(list) {
            assert!(cpus.iter().all(|&c| c < blksim::settings::MAX_CPUS));
        }
    }
});
