//! The inputs of the cross-checks (`--features crosscheck`): the project's
//! `shared/` directory (fio's example corpus, the calibration tables) and
//! Debian's real `fio`. A cross-check without them fails, saying what is
//! missing and how to get it; it is never skipped. Included by the
//! cross-check tests of blksim-fio, blksim-lab and blksim-cli with `#[path]`;
//! each of those crates has the `crosscheck` feature, and without it this
//! module is empty.

#![cfg(feature = "crosscheck")]
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The project's `shared/` directory: `$BLKSIM_SHARED`, else `shared/` beside the repository.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("BLKSIM_SHARED") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

/// `shared/REL`, which must exist.
pub fn shared(rel: &str) -> PathBuf {
    let p = shared_dir().join(rel);
    assert!(
        p.exists(),
        "cross-check input missing: {} (the project's shared/ directory, beside the repository or at \
         $BLKSIM_SHARED; the default test run, `cargo test --workspace`, does not need it)",
        p.display()
    );
    p
}

/// fio's 107 example job files, sorted.
pub fn corpus_files() -> Vec<PathBuf> {
    let dir = shared("corpus/fio-examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 107, "fio's 107 example job files in {}", dir.display());
    files
}

/// A command of Debian's fio package (`fio`, `fio_jsonplus_clat2csv`), which must be on the PATH.
pub fn fio_tool(name: &str) -> Command {
    let found =
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(name).is_file()));
    assert!(
        found,
        "cross-check input missing: `{name}` is not on the PATH (Debian/Ubuntu: apt-get install fio; \
         .ci/run installs it)"
    );
    Command::new(name)
}
