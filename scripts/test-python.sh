#!/usr/bin/env bash
# The Python package's tests (crates/blksim-py): a virtual environment under
# target/py-venv (made once; pip installs maturin, pytest and pandas from
# PyPI), the extension built into it with `maturin develop` (the workspace's
# dev profile and target/, so the Rust crates are not built twice), then
# pytest. Needs python3 with its venv module and the network to PyPI, nothing
# else; it says what is missing and fails rather than skip.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/py-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || {
    echo "scripts/test-python.sh: python3 -m venv failed: the Python tests need Python 3 with its venv module (Debian: apt install python3-venv)" >&2
    exit 1
  }
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r crates/blksim-py/requirements-test.txt
# The command the tests compare against, with the workspace's features (as `cargo test
# --workspace` builds it: nothing to rebuild after it); blksim-py is maturin's to build.
cargo build -q --workspace --exclude blksim-py
VIRTUAL_ENV=$PWD/$venv PATH=$PWD/$venv/bin:$PATH "$venv/bin/maturin" develop -q -m crates/blksim-py/Cargo.toml
"$venv/bin/python" -m pytest -q crates/blksim-py/tests "$@"
