#!/usr/bin/env bash
# Record a real blktrace here (scripts/record-blktrace.sh: the real fio on a
# loop device under the kernel's blk tracer) and check, on that new trace:
#   1. its queue events are the I/Os fio's write_iolog says it issued, in order;
#   2. blksim replays those I/Os in that order (libaio, depth 1, a simulated drive);
#   3. blksim replays it as the real fio does (null engine, the probed depth):
#      the same latency-log lines, the same I/Os issued and bytes done.
# Where the tracer cannot be used (not root, no tracefs, no blk tracer) it says
# so on stdout and checks nothing; any other failure fails.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! scripts/record-blktrace.sh "$tmp/rec" > "$tmp/out" 2> "$tmp/err"; then
  if grep -q "is not writable\|has no blk tracer" "$tmp/err"; then
    echo "not run: $(cat "$tmp/err")"
    exit 0
  fi
  cat "$tmp/out" "$tmp/err" >&2
  exit 1
fi
cargo build -q -p blksim-cli
python3 - "$tmp/rec" "$PWD/target/debug/blksim" <<'PY'
import json, os, struct, subprocess, sys
rec, blksim = sys.argv[1], sys.argv[2]
trace = open(f"{rec}/loop-randrw.blktrace", "rb").read()
queued, o, records = [], 0, 0
while o < len(trace):
    _, _, _, sector, nbytes, action = struct.unpack_from("<IIQQII", trace, o)
    if action & 0xFFFF == 1:  # __BLK_TA_QUEUE
        queued.append((0 if action & (1 << 16) else 1, sector * 512, nbytes))
    o += 48 + struct.unpack_from("<H", trace, o + 46)[0]
    records += 1
issued = [(["read", "write"].index(w[2]), int(w[3]), int(w[4]))
          for w in (l.split() for l in open(f"{rec}/loop-randrw.iolog")) if len(w) == 5 and w[2] in ("read", "write")]
assert queued == issued, f"the trace's queue events are not fio's I/Os: {len(queued)} / {len(issued)}"

def run(cmd, name, job):
    d = f"{rec}/{name}"
    os.makedirs(d)
    os.symlink(f"{rec}/loop-randrw.blktrace", f"{d}/trace.bin")
    open(f"{d}/job.fio", "w").write("[r]\nread_iolog=trace.bin\nwrite_lat_log=r\nlog_offset=1\n" + job)
    out = subprocess.run(cmd + ["--output-format=json", "job.fio"], cwd=d, capture_output=True, text=True, check=True)
    j = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]
    ios = [tuple(int(x) for x in l.split(", ")[2:5]) for l in open(f"{d}/r_clat.1.log")]
    return [(j[k]["total_ios"], j[k]["io_bytes"]) for k in ("read", "write", "trim")], [(d, off, n) for d, n, off in ios]

_, ios = run([blksim, "run"], "depth1", "ioengine=libaio\ndirect=1\niodepth=1\nreplay_redirect=/dev/nvme0n1\n")
assert ios == issued, "blksim's replay is not the I/Os fio issued in their order"
null = "ioengine=null\nreplay_redirect=/dev/null\nreplay_no_stall=1\n"
ours, fio = run([blksim, "run"], "blksim", null), run(["fio"], "fio", null)
assert ours == fio, f"blksim {ours[0]}, {len(ours[1])} lines; fio {fio[0]}, {len(fio[1])} lines"
print(f"recorded {records} records ({len(queued)} I/Os): replayed in fio's order; "
      f"null-engine replay as fio's ({len(ours[1])} done, {ours[0]})")
PY
