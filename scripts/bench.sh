#!/usr/bin/env bash
# Speed benchmark: events per second and simulated I/Os per wall second for
# the README example and for the 8-drive, 64-CPU libaio random-read job.
# Usage: scripts/bench.sh   (builds in release first)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p blksim-cli
for job in examples/randread-uring.fio examples/bench-8drive-libaio.fio; do
  /usr/bin/time -f "%M" -o /tmp/blksim-bench-rss ./target/release/blksim run "$job" --output-format json > /tmp/blksim-bench.json
  python3 - "$job" <<'PY'
import json, sys
d = json.load(open("/tmp/blksim-bench.json"))
b = d["blksim"]
ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in d["jobs"])
rss = open("/tmp/blksim-bench-rss").read().strip()
print(f"{sys.argv[1]}: simulated {b['sim_time_ns']/1e6:.0f} ms, {ios} I/Os, {b['events']} events, "
      f"wall {b['wall_time_ns']/1e9:.3f} s: {b['wall_events_per_sec']/1e6:.2f} M events/s, "
      f"{b['wall_ios_per_sec']/1e6:.2f} M simulated I/Os per wall second, max RSS {rss} KiB")
PY
done
