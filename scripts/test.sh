#!/usr/bin/env bash
# The project's one test command: the Rust workspace's tests, then the
# Python package's (scripts/test-python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
scripts/test-python.sh
