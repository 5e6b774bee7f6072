//! Running the built `blksim` binary from the repository root, for the CLI tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Run `blksim ARGS` in the repository root: (exit status, stdout, stderr).
#[allow(dead_code)] // not every test binary that includes this module runs blksim this way
pub fn blksim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_blksim")).args(args).current_dir(root()).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Run the job file text `job` with JSON output: the exit status, the parsed output (if any), stderr.
#[allow(dead_code)] // not every test binary that includes this module runs job text
pub fn run_job_json(job: &str) -> (Option<i32>, Option<serde_json::Value>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.fio");
    std::fs::write(&path, job).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", path.to_str().unwrap(), "--output-format", "json"])
        .output()
        .unwrap();
    (out.status.code(), serde_json::from_slice(&out.stdout).ok(), String::from_utf8_lossy(&out.stderr).into())
}

/// Wait until `child` (a blksim run) catches signal `sig` (its bit in SigCgt of
/// /proc/PID/status): then its run is under way. Fails if it ends first or takes a minute.
#[allow(dead_code)] // the tests that signal blksim
pub fn wait_until_it_catches(child: &mut std::process::Child, sig: i32) {
    let pid = child.id();
    let catches = || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:")).map(str::trim).unwrap_or("0");
        u64::from_str_radix(mask, 16).unwrap() & (1 << (sig - 1)) != 0
    };
    let t0 = std::time::Instant::now();
    while !catches() {
        assert!(child.try_wait().unwrap().is_none(), "blksim ended before it caught signal {sig}");
        assert!(t0.elapsed().as_secs() < 60, "blksim never set up its handler of signal {sig}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
