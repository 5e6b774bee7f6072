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
