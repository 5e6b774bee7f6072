#!/usr/bin/env bash
# Record a real blktrace of fio: fio (Debian's) running
# examples/traces/loop-randrw.fio (libaio, direct=1, random reads and writes of
# 4-16 KiB) on a loop device over a 64 MiB file, traced by the
# kernel's blk tracer through ftrace in its binary mode (the records
# blktrace(8) writes: struct blk_io_trace, version 7). blktrace(8) itself
# needs debugfs's per-device relay files, which this sandbox refuses; the
# ftrace blk tracer writes the same records (blk_trace_synthesize_old_trace).
#
# Writes OUTDIR/loop-randrw.blktrace (the trace), OUTDIR/loop-randrw.iolog
# (fio's write_iolog of the same run: the I/Os it issued, in order) and
# OUTDIR/loop-randrw.fio (the job; its device is named /dev/loop in all three).
#
# Usage: scripts/record-blktrace.sh OUTDIR        (root; tracefs; losetup; fio)
set -euo pipefail
out=${1:?usage: scripts/record-blktrace.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
job=$(cd "$(dirname "$0")/.." && pwd)/examples/traces/loop-randrw.fio
tr=/sys/kernel/debug/tracing
[ -w "$tr/current_tracer" ] || { echo "record-blktrace: $tr is not writable (needs root and tracefs)" >&2; exit 2; }
grep -qw blk "$tr/available_tracers" || { echo "record-blktrace: the kernel has no blk tracer" >&2; exit 2; }
command -v fio > /dev/null || { echo "record-blktrace: needs fio (apt install fio)" >&2; exit 2; }
work=$(mktemp -d)
truncate -s 64M "$work/img"
dev=$(losetup -f --show --direct-io=on "$work/img")
name=${dev#/dev/}
cleanup() {
  echo 0 > "$tr/tracing_on" || true
  echo 0 > "/sys/block/$name/trace/enable" || true
  echo 0 > "$tr/options/bin" || true
  echo 1 > "$tr/options/context-info" || true
  echo nop > "$tr/current_tracer" || true
  losetup -d "$dev" || true
  rm -rf "$work"
}
trap cleanup EXIT
cp "$job" "$out/loop-randrw.fio"
sed "s|^filename=.*|filename=$dev|" "$out/loop-randrw.fio" > "$work/job.fio"
echo 0 > "$tr/tracing_on"
echo nop > "$tr/current_tracer"
echo blk > "$tr/current_tracer"
echo 1 > "$tr/options/bin"
echo 0 > "$tr/options/annotate"
# Without ftrace's pid, CPU and time before each record (print_bin_fmt's context info).
echo 0 > "$tr/options/context-info"
echo > "$tr/trace"
echo 1 > "/sys/block/$name/trace/enable"
echo 1 > "$tr/tracing_on"
(cd "$work" && fio --output=/dev/null --write_iolog=fio.iolog job.fio)
echo 0 > "$tr/tracing_on"
if grep -h "^overrun: [1-9]" "$tr"/per_cpu/cpu*/stats > /dev/null; then
  echo "record-blktrace: the trace buffer overran; records were lost" >&2
  exit 1
fi
cat "$tr/trace" > "$work/trace.raw"
python3 - "$work/trace.raw" "$out/loop-randrw.blktrace" <<'PY'
import struct, sys
raw = open(sys.argv[1], "rb").read()
# The trace file begins with ftrace's text header ("# tracer: blk", "#"): drop its lines.
at = 0
while raw.startswith(b"#", at):
    at = raw.index(b"\n", at) + 1
body, n, o = raw[at:], 0, 0
while o < len(body):
    magic, = struct.unpack_from("<I", body, o)
    if magic & 0xffffff00 != 0x65617400:
        sys.exit(f"record-blktrace: no blk_io_trace magic at byte {at + o}")
    pdu_len, = struct.unpack_from("<H", body, o + 46)
    o += 48 + pdu_len
    n += 1
if o != len(body):
    sys.exit("record-blktrace: the last record is cut short")
open(sys.argv[2], "wb").write(body)
print(f"record-blktrace: {n} records")
PY
# fio's log names the device; the job file's name stands in for it.
sed "s|$dev|/dev/loop|g" "$work/fio.iolog" > "$out/loop-randrw.iolog"
echo "record-blktrace: wrote $out/loop-randrw.blktrace, loop-randrw.iolog, loop-randrw.fio"
