#!/usr/bin/env python3
"""Random null-engine jobs, each run by the real fio and by blksim, their
`write_iolog`s compared line by line (the time column cut): where fio's
offsets, sizes, directions, passes and file opens/closes differ from
blksim's. Not part of the tests or of .ci/run: it needs fio 3.42 or later
(Debian's 3.33 seeds the generators otherwise), which the machine may not
have. Build one from fio's source (the fio-3.42 tag):

    ./configure --disable-native && make fio

Usage: scripts/fio-null-sweep.py --fio PATH [--blksim PATH] [--seed S] [--count N] [--keep DIR] [--time-based] [--verify]

With --time-based each job is `time_based` for 2 ms (wall time for fio, simulated
for blksim) over a small region, so that random maps fill and files start
again (fio_file_reset); the logs are compared over the lines both have, less
the last few (where each run stopped). With --verify each job is a writer with
`verify` (half of them trimwrite), some without `do_verify`, some with
`verify_backlog`.

Prints each job that differs (its options, the line counts and the first
differing lines), refused (blksim's exit 2 and message) or failed, then a
count of each. Exit 1 when any job differs or blksim failed.
"""
import argparse
import collections
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile


def job(r):
    """A random job's options (fio's names and values)."""
    o = {}
    rw = r.choice(["read", "write", "randread", "randwrite", "rw", "randrw", "readwrite"])
    if r.random() < 0.1:
        rw = r.choice(["trim", "randtrim", "trimwrite", "randtrimwrite"])
    if r.random() < 0.2 and not rw.startswith("rand"):
        rw += ":" + r.choice(["4k", "8k", "16k", "-4k"])
    if r.random() < 0.15 and rw.startswith("rand"):
        rw += ":" + str(r.choice([2, 4, 8]))
    o["rw"] = rw
    if "rw" in rw.split(":")[0] and r.random() < 0.7:
        o["rwmixread"] = r.choice([10, 30, 50, 70, 90])
    k = r.random()
    if k < 0.4:
        o["bs"] = r.choice(["4k", "8k", "16k", "512", "64k"])
    elif k < 0.6:
        o["bsrange"] = r.choice(["4k-16k", "512-8k", "4k-64k"])
    elif k < 0.75:
        o["bssplit"] = r.choice(["4k/50:8k/50", "4k/10:16k/90", "512/30:4k/70", "4k/50:64k/25:8k/25"])
    elif k < 0.85:
        o["bs"] = r.choice(["4k,8k", "8k,4k", "16k,4k"])
    else:
        o["bs"] = "4k"
    if r.random() < 0.15:
        o["blockalign"] = r.choice(["4k", "8k"])
    if r.random() < 0.1:
        o["bs_unaligned"] = 1
    o["size"] = f"{r.choice([1, 2, 4, 8, 16])}m" if r.random() < 0.7 else f"{r.choice([1, 5, 10, 50, 100])}%"
    if r.random() < 0.3:
        o["offset"] = r.choice(["4k", "1m", "64k", "2%"])
    if r.random() < 0.5:
        o["filesize"] = "16m"
    elif "%" in o["size"]:
        o["size"] = "4m"
    if r.random() < 0.3:
        o["norandommap"] = 1
    if r.random() < 0.3:
        o["random_generator"] = r.choice(["tausworthe", "lfsr", "tausworthe64"])
    if r.random() < 0.3:
        o["randseed"] = r.randrange(1, 10**6)
    if r.random() < 0.2:
        o["random_distribution"] = r.choice(
            ["zipf:1.2", "pareto:0.3", "normal:20", "zoned:50/10:50/90", "zipf:0.8", "random"]
        )
    if r.random() < 0.15:
        o["percentage_random"] = r.choice([0, 25, 50, 90])
    if r.random() < 0.15:
        o["zonemode"] = "strided"
        o["zonesize"] = r.choice(["64k", "256k"])
        o["zoneskip"] = r.choice(["0", "64k", "1m"])
        if r.random() < 0.5:
            o["zonerange"] = r.choice(["512k", "1m"])
    k = r.random()
    if k < 0.2:
        o["io_size"] = r.choice(["256k", "1m", "3m"])
    elif k < 0.35:
        o["number_ios"] = r.choice([10, 100, 333])
    elif k < 0.5:
        o["loops"] = r.choice([2, 3])
    if r.random() < 0.15:
        o["rw_sequencer"] = r.choice(["identical", "sequential"])
    if r.random() < 0.1 and "write" in rw:
        o["verify"] = r.choice(["md5", "crc32c"])
    o["iodepth"] = r.choice([1, 4, 16])
    if r.random() < 0.15:
        # (Drawn last: the options of the seeds swept before it came stay as they were.)
        o["bs_is_seq_rand"] = 1
    if r.random() < 0.2:
        # (Drawn after it, for the same reason.)
        o["filename"] = r.choice(["/dev/nvme0n1:/dev/nvme1n1", "a:b:c"])
        if r.random() < 0.5:
            o["file_service_type"] = r.choice(["roundrobin:2", "sequential", "random", "random:4"])
    return o


def iolog(path):
    """The log's lines without fio 3's time column."""
    if not os.path.exists(path):
        return None
    out = []
    for line in open(path):
        f = line.split()
        if f and f[0].isdigit():
            f = f[1:]
        out.append(" ".join(f))
    return out


def bounded():
    """A child's files stay under 1 GiB (a runaway log fails it, not the disk)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))


def time_based(o, r):
    """The job made time-based over a small region."""
    o["size"] = r.choice(["64k", "256k", "1m"])
    o.pop("filesize", None)
    for k in ("io_size", "number_ios", "loops"):
        o.pop(k, None)
    o["time_based"] = 1
    o["runtime"] = "2ms"
    return o


def verifying(o, r):
    """The job made a verifying writer (half of them trimwrite), some without
    `do_verify`, some with `verify_backlog`; no strided zones."""
    if r.random() < 0.5:
        o["rw"] = r.choice(["trimwrite", "randtrimwrite"])
    elif "write" not in o["rw"]:
        o["rw"] = r.choice(["write", "randwrite", "rw", "randrw"])
    o["verify"] = r.choice(["md5", "crc32c"])
    if r.random() < 0.3:
        o["do_verify"] = 0
    if r.random() < 0.15:
        o["verify_backlog"] = r.choice([4, 16])
    for k in ("zonemode", "zonesize", "zoneskip", "zonerange"):
        o.pop(k, None)
    return o


def run_case(seed, args, scratch):
    r = random.Random(seed)
    o = job(r)
    if args.verify:
        o = verifying(o, random.Random(r.random()))
    if args.time_based:
        o = time_based(o, random.Random(seed ^ 0x7B))
    d = os.path.abspath(os.path.join(scratch, f"c{seed}"))
    os.makedirs(d, exist_ok=True)
    for who in ("fio", "blksim"):
        with open(os.path.join(d, f"{who}.fio"), "w") as f:
            f.write(f"[j]\nioengine=null\nfilename={o.get('filename', '/dev/nvme0n1')}\nwrite_iolog={d}/{who}.log\n")
            f.writelines(f"{k}={v}\n" for k, v in o.items() if k != "filename")
    try:
        b = subprocess.run(
            [args.blksim, "run", f"{d}/blksim.fio", "--output-format", "json"],
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=bounded,
            cwd=d,
        )
    except subprocess.TimeoutExpired:
        return "blksim failed", o, "no end within 120 s"
    if b.returncode < 0:
        return "blksim failed", o, f"signal {-b.returncode} (SIGXFSZ: a log past 1 GiB)"

    if b.returncode == 2:
        return "refused", o, (b.stderr.strip().splitlines() or [""])[-1]
    if b.returncode != 0:
        return "blksim failed", o, f"exit {b.returncode}: {b.stderr[-300:]}"
    # fio runs its job in a process of its own: a session of its own, so that a hung fio is
    # killed whole (seed 250128 hung fio 3.42, and its job process outlived the sweep).
    f = subprocess.Popen(
        [args.fio, f"{d}/fio.fio", "--output-format=json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=bounded,
        start_new_session=True,
        cwd=d,  # (fio writes verify's state files where it runs)
    )
    limit = 60 if args.time_based else 300
    try:
        ferr = f.communicate(timeout=limit)[1]
    except subprocess.TimeoutExpired:
        os.killpg(f.pid, signal.SIGKILL)
        # (fio's job process leaves the group: killed by its job file's name.)
        subprocess.run(["pkill", "-9", "-f", f"{d}/fio.fio"])
        f.communicate()
        return "fio failed", o, f"no end within {limit} s (its processes killed)"

    if f.returncode != 0:
        return "fio failed", o, ferr[-200:]
    a, c = iolog(f"{d}/fio.log"), iolog(f"{d}/blksim.log")
    if args.time_based and a is not None and c is not None and a != c:
        # Each stopped at its own time (fio's wall clock, blksim's simulated one, each with its
        # own CPU costs): the lines both have, less the last few and the shorter run's ending
        # (its end_fsync's syncs, opens and closes); none left differs.
        short = a if len(a) <= len(c) else c
        k = len(short)
        while k > 1 and short[k - 1].split()[1:2] in (["sync"], ["datasync"], ["open"], ["close"]):
            k -= 1
        k = min(k, len(short) - 4)
        if k > 0:
            a, c = a[:k], c[:k]
    if a != c:
        n = next((i for i, (x, y) in enumerate(zip(a, c)) if x != y), min(len(a), len(c)))
        return "differs", o, f"lines {len(a)} (fio) / {len(c)} (blksim), first at {n + 1}: {a[n:n + 2]} / {c[n:n + 2]}"
    return "same", o, f"{len(a)} lines"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fio", required=True, help="fio 3.42 or later")
    p.add_argument("--blksim", default="target/release/blksim")
    p.add_argument("--seed", type=int, default=1, help="the first case's seed")
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--keep", help="keep each case's files in this directory")
    p.add_argument("--time-based", action="store_true", help="time-based jobs over small regions")
    p.add_argument("--verify", action="store_true", help="every job a verifying writer")
    args = p.parse_args()
    scratch = args.keep or tempfile.mkdtemp(prefix="fio-null-sweep-")
    counts = collections.Counter()
    for seed in range(args.seed, args.seed + args.count):
        what, o, detail = run_case(seed, args, scratch)
        counts[what] += 1
        if what != "same":
            print(f"{seed} {what}: {' '.join(f'{k}={v}' for k, v in o.items())}\n    {detail}", flush=True)
    if not args.keep:
        subprocess.run(["rm", "-rf", scratch])
    print(", ".join(f"{n} {what}" for what, n in counts.most_common()))
    sys.exit(1 if counts["differs"] or counts["blksim failed"] else 0)


if __name__ == "__main__":
    main()
