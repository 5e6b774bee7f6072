#!/usr/bin/env bash
# Steady instructions per simulated I/O, as the project measures speed:
# cachegrind on examples/bench-8drive-libaio.fio with runtime=20ms and with
# runtime=10us; (Ir difference) / (I/O difference), for remappable MSIs and
# for posted ones (--cmdline intremap=posted_msi).
#
# Usage: scripts/steady-instructions.sh [BLKSIM_BINARY]   (default: a fresh release build)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind > /dev/null || { echo "needs valgrind (apt install valgrind)" >&2; exit 2; }
bin=${1:-}
if [ -z "$bin" ]; then
  cargo build --release -q -p blksim-cli
  bin=./target/release/blksim
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for rt in 20ms 10us; do
  sed "s/^runtime=.*/runtime=$rt/" examples/bench-8drive-libaio.fio > "$tmp/bench-$rt.fio"
done
measure() { # MODE RUNTIME EXTRA...
  local mode=$1 rt=$2
  shift 2
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$bin" run "$tmp/bench-$rt.fio" --output-format json "$@" > "$tmp/$mode-$rt.json" 2> "$tmp/$mode-$rt.cg"
  python3 - "$tmp/$mode-$rt.json" "$tmp/$mode-$rt.cg" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in d["jobs"])
refs = int(re.search(r"I\s+refs:\s+([\d,]+)", open(sys.argv[2]).read()).group(1).replace(",", ""))
print(refs, ios)
PY
}
for mode in remappable posted; do
  extra=()
  [ $mode = posted ] && extra=(--cmdline intremap=posted_msi)
  read -r r20 i20 < <(measure $mode 20ms "${extra[@]}")
  read -r r10 i10 < <(measure $mode 10us "${extra[@]}")
  python3 -c "print(f'$mode: {($r20 - $r10) / ($i20 - $i10):.0f} instructions per simulated I/O (Ir {$r20} - {$r10}, I/Os {$i20} - {$i10})')"
done
