//! Any input gives jobs or one clear error, never a panic: the repository's
//! job files (and, as a cross-check, fio's example corpus in shared/)
//! mutated many ways (deterministic: a fixed-seed generator), fed to the
//! parser and to the model's validation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use blksim_fio::job::{parse_job_text, ParseContext};

#[path = "splitmix/mod.rs"]
mod splitmix;
use splitmix::Gen;

const PIECES: &[&str] = &[
    "=",
    "[",
    "]",
    "[global]",
    "\n",
    ";",
    "#",
    "k",
    "m",
    "g",
    "0x",
    "-",
    ":",
    ",",
    "%",
    "${X}",
    "$ncpus",
    "+",
    "*",
    "/",
    "99999999999999999999",
    "-1",
    "0",
    "bs=",
    "iodepth=",
    "rw=",
    "cpus_allowed=",
    "numjobs=",
    "include ",
    "filename=",
    "runtime=",
    "size=",
    " ",
    "\t",
    "é",
    "\0",
];

fn mutate(text: &str, g: &mut Gen) -> String {
    let mut s: Vec<char> = text.chars().collect();
    for _ in 0..1 + g.index(4) {
        let at = g.index(s.len() + 1);
        match g.index(3) {
            0 if !s.is_empty() => {
                let end = (at + g.index(8)).min(s.len());
                s.drain(at.min(end)..end);
            }
            1 => {
                let piece: Vec<char> = PIECES[g.index(PIECES.len())].chars().collect();
                for (i, c) in piece.into_iter().enumerate() {
                    s.insert((at + i).min(s.len()), c);
                }
            }
            _ => {
                if !s.is_empty() {
                    let i = at.min(s.len() - 1);
                    s[i] = PIECES[g.index(PIECES.len())].chars().next().unwrap_or('x');
                }
            }
        }
    }
    s.into_iter().collect()
}

/// Mutate each of `files` `rounds` times; parse each mutant and validate what parses.
fn mutants_never_panic(files: &[PathBuf], rounds: usize) {
    let machine = blksim::machine::builtin("spr-gen5").unwrap();
    let ctx = ParseContext::for_machine(&machine, BTreeMap::new());
    let mut g = Gen(42);
    let (mut parsed, mut rejected) = (0, 0);
    for round in 0..rounds {
        for f in files {
            let text = std::fs::read_to_string(f).unwrap();
            let m = mutate(&text, &mut g);
            let path = f.with_file_name(format!("mutant-{round}.fio"));
            match parse_job_text(&m, &path, &ctx) {
                Ok(jobs) => {
                    parsed += 1;
                    let configs: Vec<_> = jobs.jobs.into_iter().map(|j| j.config).collect();
                    // The model checks what the parser let through; an error is fine, a panic is not.
                    let _ = blksim::validate(&machine, &Default::default(), &configs);
                }
                Err(e) => {
                    rejected += 1;
                    assert!(!e.message.is_empty(), "an error says what is wrong");
                    // The mutant itself, or a file it includes.
                    assert!(e.file == path || e.file.is_file(), "the error names the file: {e}");
                    assert!(e.to_string().starts_with(&e.file.display().to_string()), "{e}");
                }
            }
        }
    }
    assert!(parsed > 0 && rejected > 0, "mutations both pass and fail: {parsed} parsed, {rejected} rejected");
}

/// The `*.fio` files of the repository's directories `dirs`.
fn repository_job_files(dirs: &[&str]) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    files
}

#[test]
fn mutated_repository_job_files_never_panic_the_parser_or_the_model() {
    let files = repository_job_files(&["crates/blksim-fio/tests/jobs", "examples", "experiments/jobs"]);
    assert!(files.len() >= 30, "{} job files", files.len());
    mutants_never_panic(&files, 100);
}

#[cfg(feature = "crosscheck")]
#[path = "crosscheck/mod.rs"]
mod crosscheck;

#[cfg(feature = "crosscheck")]
#[test]
fn mutated_corpus_files_never_panic_the_parser_or_the_model() {
    mutants_never_panic(&crosscheck::corpus_files(), 100);
}
