//! Issue 10, point 7: every command the README shows runs. The test reads
//! README.md: the commands of its code blocks (indented or fenced, lines
//! joined at a trailing `\`) and of its inline code that start with
//! `blksim ` or `cargo run -p blksim-cli -- `, leaving out the
//! synopsis (`[...]`, `|`, `...`, upper-case placeholders). Each runs with
//! the built binary in a scratch directory that sees the repository's
//! `examples/` and `experiments/`, and must exit 0. The README's sweep
//! spec is written as `sweep.toml` beside a small `job.fio` (the README
//! leaves the job to the reader). `fit` runs with `--iterations 2` unless
//! `BLKSIM_README_SLOW=1` (the README's command takes a minute).

use std::path::Path;
use std::process::Command;

mod common;

/// The commands of the README, as argument lists for the binary.
fn readme_commands(readme: &str) -> Vec<Vec<String>> {
    let mut lines: Vec<String> = Vec::new();
    let mut fenced = false;
    let mut pending = String::new();
    for line in readme.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let code = if fenced { Some(line.trim()) } else { line.strip_prefix("    ").map(str::trim) };
        let Some(code) = code else { continue };
        if !pending.is_empty() {
            pending.push(' ');
            pending += code.trim_end_matches('\\').trim();
            if !code.ends_with('\\') {
                lines.push(std::mem::take(&mut pending));
            }
            continue;
        }
        if code.ends_with('\\') {
            pending = code.trim_end_matches('\\').trim().to_string();
        } else {
            lines.push(code.to_string());
        }
    }
    // Inline code: `blksim ...` in the prose.
    let mut rest = readme;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('`') else { break };
        let span = after[..end].split_whitespace().collect::<Vec<_>>().join(" ");
        if span.starts_with("blksim ") {
            lines.push(span);
        }
        rest = &after[end + 1..];
    }
    let placeholder = |w: &str| w.len() > 2 && w.chars().all(|c| c.is_ascii_uppercase() || c == '.' || c == '_');
    let mut commands = Vec::new();
    for line in lines {
        let args = if let Some(a) = line.strip_prefix("cargo run -p blksim-cli -- ") {
            a.to_string()
        } else if let Some(a) = line.strip_prefix("blksim ") {
            a.to_string()
        } else {
            continue;
        };
        if args.contains('[') || args.contains('|') || args.contains("...") {
            continue;
        }
        // A shell comment, then a redirection: the command's output is what
        // matters here.
        let args = args.split(" # ").next().unwrap();
        let args = args.split(" > ").next().unwrap().to_string();
        let words: Vec<String> = args.split_whitespace().map(str::to_string).collect();
        if words.iter().any(|w| placeholder(w)) {
            continue;
        }
        if !commands.contains(&words) {
            commands.push(words);
        }
    }
    commands
}

/// The README's TOML block (its sweep spec).
fn readme_sweep_spec(readme: &str) -> String {
    let start = readme.find("```toml\n").expect("the sweep spec") + "```toml\n".len();
    let end = readme[start..].find("```").unwrap();
    readme[start..start + end].to_string()
}

#[test]
fn every_command_of_the_readme_runs() {
    let root = common::root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let commands = readme_commands(&readme);
    let has = |cmd: &[&str]| commands.iter().any(|c| c.iter().map(String::as_str).eq(cmd.iter().copied()));
    // The ones issue 10 is about are among them.
    let tio: Vec<&str> =
        "t-io_uring -b512 -d128 -c32 -s32 -p1 -F1 -B1 --taskset 0 -- /dev/nvme0n1".split(' ').collect();
    assert!(has(&tio));
    assert!(has(&["run", "examples/randread-uring.fio"]));
    assert!(commands.len() >= 12, "{commands:?}");
    let guard = tempfile::Builder::new().prefix("blksim-readme-").tempdir().unwrap();
    let dir = guard.path().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    for d in ["examples", "experiments"] {
        let link = dir.join(d);
        if !link.exists() {
            std::os::unix::fs::symlink(root.join(d), &link).unwrap();
        }
    }
    std::fs::write(dir.join("sweep.toml"), readme_sweep_spec(&readme)).unwrap();
    std::fs::write(
        dir.join("job.fio"),
        "[r]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\ntime_based\nruntime=1ms\nfilename=/dev/nvme0n1\ncpus_allowed=0\n",
    )
    .unwrap();
    let slow = std::env::var_os("BLKSIM_README_SLOW").is_some();
    let mut failures = Vec::new();
    for cmd in &commands {
        let mut args = cmd.clone();
        if args[0] == "fit" && !slow {
            args.extend(["--iterations".into(), "2".into()]);
        }
        let out = Command::new(env!("CARGO_BIN_EXE_blksim")).args(&args).current_dir(&dir).output().unwrap();
        if !out.status.success() {
            failures.push(format!(
                "blksim {}: exit {:?}: {}",
                args.join(" "),
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    remove(&dir);
    assert!(
        failures.is_empty(),
        "{} of {} README commands failed:\n{}",
        failures.len(),
        commands.len(),
        failures.join("\n")
    );
}

fn remove(dir: &Path) {
    std::fs::remove_dir_all(dir).ok();
}
