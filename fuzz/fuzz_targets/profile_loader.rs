//! Machine profiles: any TOML text (with or without `extends` of a built-in)
//! loads into a machine or gives an error naming the file; a machine that
//! loads can be validated against a small job. Never a panic, never an
//! allocation sized by the input without a bound.
#![no_main]

use blksim::machine::{load_profile, Builtins};
use blksim::workload::{IoEngine, JobConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match load_profile(&text, "fuzz.toml", &Builtins) {
        Ok(machine) => {
            let mut job = JobConfig::new("j");
            job.ioengine = IoEngine::Null;
            job.size = Some(1 << 20);
            let _ = blksim::validate(&machine, &Default::default(), &[job]);
        }
        Err(e) => assert!(e.contains("fuzz.toml"), "{e}"),
    }
});
