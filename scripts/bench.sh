#!/usr/bin/env bash
# Speed benchmark: events per second and simulated I/Os per wall second for
# the README example and for the 8-drive, 64-CPU libaio random-read job, plus
# the 8-drive job run 10x longer (memory must stay flat as runtime grows).
# Each job runs RUNS times (default 5); the median, min and max are printed,
# since a shared machine's timing is noisy.
#
# Usage: scripts/bench.sh [--pgo] [RUNS]
#   --pgo   benchmark the profile-guided build (scripts/build-pgo.sh) instead
#           of `cargo build --release`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./target/release/blksim
if [ "${1:-}" = "--pgo" ]; then
  scripts/build-pgo.sh > /dev/null
  bin=./target/pgo/release/blksim
  shift
else
  cargo build --release -q -p blksim-cli
fi
runs=${1:-5}
# One core, as the target says; the last one, away from most device interrupts.
pin=()
if command -v taskset > /dev/null; then pin=(taskset -c "$(($(nproc) - 1))"); fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/^runtime=.*/runtime=1s/' examples/bench-8drive-libaio.fio > "$tmp/bench-8drive-libaio-1s.fio"
echo "binary: $bin; ${pin[*]:-unpinned}; $runs runs per job; median [min, max]"
for job in examples/randread-uring.fio examples/bench-8drive-libaio.fio "$tmp/bench-8drive-libaio-1s.fio"; do
  : > "$tmp/runs"
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%M" -o "$tmp/rss" "${pin[@]}" "$bin" run "$job" --output-format json > "$tmp/out.json"
    python3 - "$tmp/out.json" "$tmp/rss" >> "$tmp/runs" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d["blksim"]
ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in d["jobs"])
print(b["sim_time_ns"], ios, b["events"], b["wall_time_ns"], b["wall_events_per_sec"], b["wall_ios_per_sec"],
      open(sys.argv[2]).read().strip())
PY
  done
  python3 - "$job" "$tmp/runs" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[2])]
sim, ios, events = rows[0][0], int(rows[0][1]), int(rows[0][2])
def col(i, scale):
    v = sorted(r[i] / scale for r in rows)
    return f"{statistics.median(v):.2f} [{v[0]:.2f}, {v[-1]:.2f}]"
name = sys.argv[1].split("/")[-1]
print(f"{name}: simulated {sim/1e6:.0f} ms, {ios} I/Os, {events} events; "
      f"wall {col(3, 1e9)} s; {col(4, 1e6)} M events/s; {col(5, 1e6)} M simulated I/Os per wall second; "
      f"max RSS {max(r[6] for r in rows)/1024:.1f} MiB")
PY
done
