//! fio job files: any text parses into jobs or gives an error naming the
//! file; what parses is checked against the built-in machine, which accepts
//! it or says why not. Never a panic.
#![no_main]

use std::collections::BTreeMap;
use std::path::Path;

use blksim_fio::job::{parse_job_text, ParseContext};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::machine;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let machine = machine("spr-gen5");
    let ctx = ParseContext { ncpus: 128, mb_memory: 65536, pagesize: 4096, env: BTreeMap::new(), numa_nodes: Vec::new(), sections: Vec::new(), read_only: false, device_bytes: BTreeMap::new() };
    match parse_job_text(&text, Path::new("fuzz.fio"), &ctx) {
        Ok(jobs) => {
            let configs: Vec<_> = jobs.jobs.into_iter().map(|j| j.config).collect();
            let _ = blksim::validate(machine, &Default::default(), &configs);
        }
        Err(e) => assert!(!e.message.is_empty() && e.to_string().contains("fuzz.fio")),
    }
});
