#!/usr/bin/env python3
"""The cross-checks alone: every test that exists only with `--features
crosscheck` (whole test targets that require the feature, and the tests a
target gains with it), run from its package's directory as cargo runs it.
The workspace's other tests do not change with the feature (it gates test
code only) and ran in the README's test command before this; running them
again would only double CI's time. Exits non-zero if a test fails, if the
feature adds no test (something broke the lists), or if a list cannot be read.

Usage: scripts/crosscheck-tests.py   (from anywhere; needs cargo)
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def executables(features):
    """(package manifest dir, target kind, target name) -> test executable, built."""
    cmd = ["cargo", "test", "--workspace", "--no-run", "--message-format=json", *features]
    out = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, check=True, text=True).stdout
    exes = {}
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable") or not msg["profile"]["test"]:
            continue
        target = msg["target"]
        key = (os.path.dirname(msg["manifest_path"]), tuple(target["kind"]), target["name"])
        exes[key] = msg["executable"]
    return exes


def tests(exe, cwd):
    """The test names of a libtest executable."""
    out = subprocess.run([exe, "--list", "--format", "terse"], cwd=cwd, stdout=subprocess.PIPE, check=True, text=True)
    return {line[: -len(": test")] for line in out.stdout.splitlines() if line.endswith(": test")}


def main():
    plain = executables([])
    checked = executables(["--features", "crosscheck"])
    failed, ran = [], 0
    for key in sorted(checked):
        pkg, _, name = key
        gained = tests(checked[key], pkg) - (tests(plain[key], pkg) if key in plain else set())
        if not gained:
            continue
        label = f"{os.path.relpath(pkg, ROOT)} {name}"
        print(f"== {label}: {len(gained)} cross-check test(s)", flush=True)
        r = subprocess.run([checked[key], "--exact", *sorted(gained)], cwd=pkg)
        ran += len(gained)
        if r.returncode != 0:
            failed.append(label)
    if ran == 0:
        print("crosscheck-tests: --features crosscheck added no test: the lists are wrong", file=sys.stderr)
        return 1
    if failed:
        print(f"crosscheck-tests: failures in {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"crosscheck-tests: {ran} cross-check tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
