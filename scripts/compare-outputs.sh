#!/usr/bin/env bash
# Does a change leave every output byte the same? Builds blksim at BASE (a
# git revision, default HEAD) and from the working tree, runs the same
# commands with both — `run` on the examples in both MSI modes and every
# output format, traces, timed actions, null_blk, mq-deadline (with and
# without its patch), polled and sync engines, t-io_uring, dsa-memfill,
# errors, `reproduce --all --format json` — and compares what they print
# (stdout, stderr and exit status; JSON fields whose names contain `wall`
# removed, since they are wall-clock readings).
#
# Usage: scripts/compare-outputs.sh [--instructions] [BASE]
#   --instructions  also count instructions per simulated I/O on
#                   examples/bench-8drive-libaio.fio with valgrind's
#                   cachegrind for both builds, and print the change.
# COMPARE_KEEP=DIR keeps the outputs of both builds in DIR.
# COMPARE_BASE_BIN=FILE takes FILE as the base build (no worktree, no
# build): keep a copy of a release binary to compare a series of changes
# against it quickly.
# Exit status: 0 identical, 1 something differs, 2 usage or build error.
set -euo pipefail
cd "$(dirname "$0")/.."
instructions=0
if [ "${1:-}" = "--instructions" ]; then
  instructions=1
  shift
fi
base=${1:-HEAD}
[ $# -le 1 ] || { echo "usage: scripts/compare-outputs.sh [--instructions] [BASE]" >&2; exit 2; }
rev=$(git rev-parse --verify -q "$base^{commit}") || { echo "compare-outputs: '$base' is not a revision" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/base-tree" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

# The base build keeps its own target directory, so that it is cached
# between runs and never clobbers the working tree's.
if [ -n "${COMPARE_BASE_BIN:-}" ]; then
  base_bin=$COMPARE_BASE_BIN
  [ -x "$base_bin" ] || { echo "compare-outputs: COMPARE_BASE_BIN=$base_bin is not an executable" >&2; exit 2; }
else
  git worktree add -q --detach "$tmp/base-tree" "$rev"
  base_target=$PWD/target/compare-base
  (cd "$tmp/base-tree" && CARGO_TARGET_DIR="$base_target" cargo build --release -q -p blksim-cli) || exit 2
  base_bin=$base_target/release/blksim
fi
cargo build --release -q -p blksim-cli || exit 2
new_bin=$PWD/target/release/blksim

# Job files the examples do not cover.
j=$tmp/jobs
mkdir -p "$j"
sed 's/^runtime=.*/runtime=20ms/' examples/bench-8drive-libaio.fio > "$j/bench-20ms.fio"
printf '[sync]\nioengine=psync\nrw=randread\nbs=4k\ndirect=1\nfilename=/dev/nvme0n1\ntime_based\nruntime=5ms\n' > "$j/psync.fio"
printf '[p]\nioengine=pvsync2\nhipri\nrw=randread\nbs=4k\ndirect=1\nfilename=/dev/nvme1n1\ntime_based\nruntime=5ms\ncpus_allowed=2\n' > "$j/pvsync2-hipri.fio"
printf '[u]\nioengine=io_uring\nhipri\nfixedbufs=1\nregisterfiles=1\nrw=randread\nbs=512\niodepth=64\niodepth_batch_submit=16\niodepth_batch_complete_max=16\ndirect=1\nfilename=/dev/nvme0n1\ntime_based\nruntime=5ms\ncpus_allowed=1\n' > "$j/uring-iopoll.fio"
printf '[w]\nioengine=libaio\nrw=write\nbs=4k\niodepth=32\niodepth_batch_submit=8\ndirect=1\nfilename=/dev/nvme2n1\ntime_based\nruntime=5ms\ncpus_allowed=3\n[m]\nioengine=io_uring\nrw=randrw\nrwmixread=70\nbs=8k\niodepth=16\ndirect=1\nfilename=/dev/nvme3n1:/dev/nvme4n1\ntime_based\nruntime=5ms\nramp_time=1ms\ncpus_allowed=4-5\nnumjobs=2\n' > "$j/writes-mixed.fio"
# Both threads of cores 0 and 1 busy (CPUs 64 and 65 are their siblings).
printf '[global]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=16\ndirect=1\ntime_based\nruntime=5ms\ncpus_allowed_policy=split\n[a]\nfilename=/dev/nvme0n1\ncpus_allowed=0,1,64,65\nnumjobs=4\n' > "$j/smt.fio"
printf '[n]\nioengine=io_uring\nrw=randread\nbs=4k\niodepth=8\ndirect=1\nfilename=/dev/nullb0\ntime_based\nruntime=3ms\ncpus_allowed=0-3\ncpus_allowed_policy=split\nnumjobs=4\n' > "$j/nullb.fio"
printf '[s1]\nioengine=psync\nrw=read\nbs=4k\ndirect=1\nfilename=/dev/nvme0n1\nsize=4m\n[s2]\nstonewall\nioengine=null\nrw=randread\nbs=4k\nsize=1m\nstartdelay=1ms\n' > "$j/phases.fio"
printf '[sd]\nioengine=sync\nrw=read\nbs=4k\ndirect=1\nfilename=/dev/sda\ntime_based\nruntime=20ms\ncpus_allowed=0\n[sdr]\nioengine=libaio\niodepth=8\nrw=randread\nbs=8k\ndirect=1\nfilename=/dev/sdb:/dev/sdm\ntime_based\nruntime=20ms\ncpus_allowed=5\n[sdw]\nioengine=libaio\niodepth=4\nrw=write\nbs=64k\ndirect=1\nfilename=/dev/sdc\ntime_based\nruntime=20ms\ncpus_allowed=9\n' > "$j/scsi.fio"
printf '[ng]\nioengine=io_uring_cmd\ncmd_type=nvme\nfixedbufs=1\nrw=randread\nbs=4k\niodepth=32\nfilename=/dev/ng0n1\ntime_based\nruntime=3ms\ncpus_allowed=1\n[sq]\nioengine=io_uring\nsqthread_poll=1\nrw=randread\nbs=4k\niodepth=32\ndirect=1\nfilename=/dev/nvme1n1\ntime_based\nruntime=3ms\ncpus_allowed=2\n' > "$j/uring-more.fio"
printf '[r]\nioengine=libaio\nrw=randrw\nbssplit=4k/50:16k/50\nrate_iops=20000,5000\nthinktime=50\nthinktime_blocks=8\niodepth=8\ndirect=1\nfilename=/dev/nvme0n1\ntime_based\nruntime=4ms\ncpus_allowed=3\n[o]\nioengine=psync\nrw=read:8k\nbs=4k\ndirect=1\nfilename=/dev/nvme1n1\nsize=1m\nrandom_distribution=zipf:1.1\ncpus_allowed=4\n' > "$j/paced.fio"
printf '[bad]\nioengine=io_uring\nsqthread_poll=1\ndirect=1\nfilename=/dev/nvme0n1\nruntime=1ms\n' > "$j/not-modelled.fio"
printf '[bad]\nioengine=psync\ndirect=1\nfilename=/dev/nvme9n1\nruntime=1ms\n' > "$j/no-device.fio"

# One case per line: NAME<TAB>ARGUMENTS (shell words: quote what has spaces).
cases=$(cat <<EOF
example-json+	run examples/randread-uring.fio --output-format json+
example-normal-all	run examples/randread-uring.fio --interrupts --mpstat --iostat --breakdown
example-posted	run examples/randread-uring.fio --cmdline intremap=posted_msi --output-format json --seed 7
example-posted-normal	run examples/randread-uring.fio --cmdline intremap=posted_msi --interrupts --breakdown
example-rq2-posted	run examples/randread-uring.fio --cmdline intremap=posted_msi --set /sys/block/nvme0n1/queue/rq_affinity=2 --output-format json
example-rq0	run examples/randread-uring.fio --set /sys/block/nvme0n1/queue/rq_affinity=0 --output-format json
bench-remappable	run $j/bench-20ms.fio --output-format json
bench-posted	run $j/bench-20ms.fio --cmdline intremap=posted_msi --output-format json
bench-posted-loops	run $j/bench-20ms.fio --cmdline "intremap=posted_msi blksim.max_posted_msi_coalescing_loop=1" --output-format json
bench-normal	run $j/bench-20ms.fio --interrupts --mpstat --iostat
trace-remappable	run examples/randread-uring.fio --trace @OUT@/trace-r.json --trace-window 100ms:100.2ms
trace-posted	run examples/randread-uring.fio --cmdline intremap=posted_msi --trace @OUT@/trace-p.json --trace-window 100ms:100.2ms
psync	run $j/psync.fio --output-format json+
pvsync2-hipri	run $j/pvsync2-hipri.fio --cmdline nvme.poll_queues=8 --output-format json
uring-iopoll	run $j/uring-iopoll.fio --cmdline nvme.poll_queues=4 --output-format json
writes-mixed	run $j/writes-mixed.fio --output-format json --breakdown
writes-nomerge	run $j/writes-mixed.fio --set /sys/block/nvme2n1/queue/nomerges=2 --output-format json
smt	run $j/smt.fio --output-format json
smt-posted-rq2	run $j/smt.fio --cmdline intremap=posted_msi --set /sys/block/nvme0n1/queue/rq_affinity=2 --output-format json
nullb-irqmode0	run $j/nullb.fio --cmdline null_blk.irqmode=0 --output-format json
nullb-irqmode1	run $j/nullb.fio --cmdline "null_blk.irqmode=1 null_blk.submit_queues=4" --set /sys/block/nullb0/queue/rq_affinity=2 --output-format json
nullb-irqmode1-sq	run $j/nullb.fio --cmdline null_blk.irqmode=1 --output-format json
nullb-irqmode2	run $j/nullb.fio --cmdline "null_blk.irqmode=2 null_blk.completion_nsec=5000" --output-format json
phases	run $j/phases.fio --output-format json
mq-deadline	run experiments/jobs/mq-deadline-scalability.fio --machine ryzen-7950x --cmdline null_blk.submit_queues=1 --set /sys/block/nullb0/queue/scheduler=mq-deadline --output-format json
mq-deadline-2024	run experiments/jobs/mq-deadline-scalability.fio --machine ryzen-7950x --cmdline null_blk.submit_queues=1 --set /sys/block/nullb0/queue/scheduler=mq-deadline --patch mq-deadline-2024 --output-format json
mq-deadline-nvme	run $j/smt.fio --set /sys/block/nvme0n1/queue/scheduler=mq-deadline --output-format json
tio-irq	t-io_uring -b512 -d128 -c32 -s32 -p0 -F1 -B1 --taskset 0 -r 5ms -- /dev/nvme0n1
tio-poll	t-io_uring -b512 -d128 -c32 -s32 -p1 -F1 -B1 --taskset 0 -r 5ms --cmdline nvme.poll_queues=4 -- /dev/nvme0n1
tio-two	t-io_uring -b512 -d64 -c16 -s16 -p0 -n2 --taskset 0,1 -r 3ms -- /dev/nvme0n1 /dev/nvme1n1
tio-5m	t-io_uring -b512 -d128 -c32 -s32 -p1 -F1 -B1 --taskset 0 -r 3ms --machine x86-gen5-5m --cmdline nvme.poll_queues=4 -- /dev/nvme0n1
dsa-remappable	dsa-memfill --devices dsa0,dsa1 --bytes 4k --outstanding 8 --irq-cpu 0 --runtime 3ms --format json
dsa-posted	dsa-memfill --devices dsa0,dsa1 --bytes 4k --outstanding 8 --irq-cpu 0 --runtime 3ms --cmdline intremap=posted_msi --format json
dsa-text	dsa-memfill --devices dsa0,dsa1 --bytes 4k --outstanding 32 --irq-cpu 0 --runtime 2ms
dsa-move	dsa-memfill --devices dsa0,dsa1 --outstanding 8 --irq-cpu 0 --runtime 3ms --at 1ms:/proc/irq/129/smp_affinity_list=5 --at 2ms:/sys/devices/system/cpu/cpu0/online=0 --format json
dsa-move-posted	dsa-memfill --devices dsa0,dsa1 --outstanding 8 --irq-cpu 0 --runtime 3ms --cmdline intremap=posted_msi --at 1ms:/proc/irq/129/smp_affinity_list=5 --at 2ms:/sys/devices/system/cpu/cpu0/online=0 --format json
machines	machines
machine-spr	machines spr-gen5
parse-only	run examples/bench-8drive-libaio.fio --parse-only
scsi	run $j/scsi.fio --machine hp-ia64-2008 --output-format json --interrupts --breakdown
scsi-normal	run $j/scsi.fio --machine hp-ia64-2008 --set /sys/block/sda/queue/rq_affinity=2 --patch io-cpu-affinity-2008 --set /sys/block/sdb/queue/queue_affinity=7 --iostat --mpstat
scsi-deadline	run $j/scsi.fio --machine hp-ia64-2008 --set /sys/block/sdb/queue/scheduler=mq-deadline --set /sys/block/sdc/queue/scheduler=mq-deadline --output-format json
uring-more	run $j/uring-more.fio --output-format json --breakdown
uring-more-strict	run $j/uring-more.fio --cmdline "iommu.strict=1 nvme.poll_queues=2" --patch dma-premap --output-format json
uring-more-posted	run $j/uring-more.fio --cmdline "intremap=posted_msi nvme.write_queues=2" --interrupts
paced	run $j/paced.fio --output-format json
nullb-poll	t-io_uring -b512 -d32 -c8 -s8 -p1 --taskset 0 -r 2ms --cmdline null_blk.poll_queues=2 -- /dev/nullb0
hotplug	run $j/bench-20ms.fio --at 2ms:/sys/devices/system/cpu/cpu5/online=0 --at 4ms:/sys/devices/system/cpu/cpu5/online=1 --output-format json
coalesce	run examples/randread-uring.fio --set /sys/class/nvme/nvme0/blksim/interrupt_coalescing=8,10 --output-format json
err-not-modelled	run $j/not-modelled.fio
err-no-device	run $j/no-device.fio
err-offline-managed	run examples/randread-uring.fio --at 1ms:/sys/devices/system/cpu/cpu0/online=0
err-managed-affinity	run examples/randread-uring.fio --set /proc/irq/130/smp_affinity_list=3
err-posting	run examples/randread-uring.fio --machine ryzen-7950x --cmdline intremap=posted_msi
reproduce	reproduce --all --format json --jobs 2
EOF
)

# Remove the lines of JSON fields whose names contain "wall" (wall-clock
# readings; fio's JSON and blksim's put one field on a line), in place.
strip_wall() {
  sed -i -E '/^\s*"[^"]*wall[^"]*"\s*:/d' "$@"
}

run_all() { # BIN OUTDIR
  local bin=$1 out=$2
  mkdir -p "$out"
  while IFS=$'\t' read -r name args; do
    [ -n "$name" ] || continue
    set +e
    eval "RUNTIME=10ms \"\$bin\" ${args//@OUT@/$out}" > "$out/$name.stdout" 2> "$out/$name.stderr"
    echo $? > "$out/$name.status"
    set -e
  done <<< "$cases"
  strip_wall "$out"/*.stdout "$out"/*.json
}

run_all "$base_bin" "$tmp/base"
run_all "$new_bin" "$tmp/new"
if [ -n "${COMPARE_KEEP:-}" ]; then
  mkdir -p "$COMPARE_KEEP" && cp -r "$tmp/base" "$tmp/new" "$COMPARE_KEEP/"
fi
n=$(grep -c . <<< "$cases")
# What each case exited with (errors are cases too, but a typo in a case
# should not pass unnoticed as an error on both sides).
echo "exit status per case: $(cd "$tmp/new" && for f in *.status; do printf '%s=%s ' "${f%.status}" "$(cat "$f")"; done)"
if diff -r "$tmp/base" "$tmp/new" > "$tmp/diff"; then
  echo "identical: $n cases (base $(git rev-parse --short "$rev"), working tree)"
  status=0
else
  echo "DIFFERENT outputs (base $(git rev-parse --short "$rev") vs working tree):"
  grep -E '^(diff|Only)' "$tmp/diff" | sed "s|$tmp/||g"
  head -60 "$tmp/diff" | sed "s|$tmp/||g"
  status=1
fi

if [ $instructions = 1 ]; then
  command -v valgrind > /dev/null || { echo "--instructions needs valgrind (apt install valgrind)" >&2; exit 2; }
  for which in base new; do
    bin=$base_bin
    [ $which = new ] && bin=$new_bin
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
      "$bin" run "$j/bench-20ms.fio" --output-format json > "$tmp/$which.bench.json" 2> "$tmp/$which.cg"
    python3 - "$which" "$tmp/$which.bench.json" "$tmp/$which.cg" >> "$tmp/instr" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[2]))
ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in d["jobs"])
refs = int(re.search(r"I\s+refs:\s+([\d,]+)", open(sys.argv[3]).read()).group(1).replace(",", ""))
print(sys.argv[1], refs, ios)
PY
  done
  python3 - "$tmp/instr" <<'PY'
import sys
rows = {w: (int(r), int(i)) for w, r, i in (l.split() for l in open(sys.argv[1]))}
(br, bi), (nr, ni) = rows["base"], rows["new"]
print(f"instructions per simulated I/O (bench-8drive-libaio, 20 ms, cachegrind): "
      f"base {br / bi:.0f}, new {nr / ni:.0f} ({(nr / ni) / (br / bi) * 100 - 100:+.1f}%)")
PY
fi
exit $status
