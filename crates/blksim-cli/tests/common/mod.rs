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
