#!/usr/bin/env bash
# A profile-guided (PGO) release build of the blksim binary, for long sweeps:
# build with instrumentation, run a few training jobs, merge the profile,
# rebuild with it. Same code and same output as `cargo build --release`
# (the profile only changes code layout and inlining); typically 10-20% more
# simulated I/Os per wall second.
#
# Usage: scripts/build-pgo.sh        -> target/pgo/release/blksim
# Needs llvm-profdata of rustc's LLVM major version: set LLVM_PROFDATA, or
# `rustup component add llvm-tools`, or Debian's llvm-N package.
set -euo pipefail
cd "$(dirname "$0")/.."

major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
profdata=${LLVM_PROFDATA:-}
if [ -z "$profdata" ]; then
  for p in "$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-profdata \
           "$(command -v "llvm-profdata-$major" || true)" \
           "/usr/lib/llvm-$major/bin/llvm-profdata"; do
    if [ -n "$p" ] && [ -x "$p" ]; then profdata=$p; break; fi
  done
fi
if [ -z "$profdata" ]; then
  echo "build-pgo.sh: no llvm-profdata for LLVM $major (rustc's); set LLVM_PROFDATA," \
       "or run 'rustup component add llvm-tools', or 'apt install llvm-$major'" >&2
  exit 2
fi

dir=$PWD/target/pgo-profile
rm -rf "$dir" && mkdir -p "$dir"
RUSTFLAGS="-Cprofile-generate=$dir" cargo build --release -q -p blksim-cli --target-dir target/pgo-gen
gen=target/pgo-gen/release/blksim

# Training: the README example, the 8-drive bench (remappable and posted),
# a sync job and the DSA benchmark, each short.
short=$dir/bench-short.fio
sed 's/^runtime=.*/runtime=20ms/' examples/bench-8drive-libaio.fio > "$short"
"$gen" run examples/randread-uring.fio > /dev/null
"$gen" run "$short" --output-format json > /dev/null
"$gen" run "$short" --cmdline intremap=posted_msi > /dev/null
printf '[sync]\nioengine=psync\nrw=randread\nbs=4k\ndirect=1\nfilename=/dev/nvme0n1\ntime_based\nruntime=5ms\n' > "$dir/sync.fio"
"$gen" run "$dir/sync.fio" > /dev/null
"$gen" dsa-memfill --runtime 2ms > /dev/null

"$profdata" merge -o "$dir/merged.profdata" "$dir"/*.profraw
RUSTFLAGS="-Cprofile-use=$dir/merged.profdata" cargo build --release -q -p blksim-cli --target-dir target/pgo
echo "target/pgo/release/blksim (profile: $dir/merged.profdata)"
