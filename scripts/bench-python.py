#!/usr/bin/env python3
"""What the Python package costs (issue 22, point 5), run with the package
installed (scripts/test-python.sh's venv: target/py-venv/bin/python):

1. Python's overhead: CPU time of a 10 ms job (examples/bench-8drive-libaio.fio
   with runtime=10ms) through blksim.run against the same run through the
   `blksim` command of the same build profile (BLKSIM_BIN, default
   target/debug/blksim, which maturin develop's build matches), median of 9.
2. Ray: a 16-point sweep (4 jobs on one drive, 100 ms each) on a local Ray with
   1 CPU and with 2 CPUs, wall time, and their ratio.
"""

import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import blksim

ROOT = Path(__file__).resolve().parents[1]
BIN = os.environ.get("BLKSIM_BIN", str(ROOT / "target" / "debug" / "blksim"))
tmp = Path(tempfile.mkdtemp(prefix="blksim-bench-py-"))

job = tmp / "bench-10ms.fio"
job.write_text((ROOT / "examples" / "bench-8drive-libaio.fio").read_text().replace("runtime=100ms", "runtime=10ms"))
assert "runtime=10ms" in job.read_text()


def cli_cpu():
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([BIN, "run", str(job), "--output-format", "json"], check=True, capture_output=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def py_cpu():
    t = time.process_time()
    blksim.run(job).json
    return time.process_time() - t


py_cpu(), cli_cpu()
c = sorted(cli_cpu() for _ in range(9))[4]
p = sorted(py_cpu() for _ in range(9))[4]
print(f"10 ms job, CPU time, median of 9: command {c * 1e3:.0f} ms, Python {p * 1e3:.0f} ms ({100 * (p / c - 1):+.1f}%)")

(tmp / "job.fio").write_text("""[global]
ioengine=libaio
direct=1
rw=randread
bs=4k
time_based
runtime=100ms
[a]
filename=/dev/nvme0n1
cpus_allowed=0-3
numjobs=4
cpus_allowed_policy=split
""")
(tmp / "spec.toml").write_text("""job = "job.fio"
[axes]
iodepth = [1, 4, 16, 64]
cmdline = ["", "intremap=posted_msi"]
"/sys/block/nvme0n1/queue/rq_affinity" = [1, 2]
""")
import ray  # noqa: E402

wall = {}
for cpus in (1, 2):
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    ray.get([ray.remote(lambda: 1).remote() for _ in range(cpus)])  # workers up before the clock starts
    t = time.perf_counter()
    df = blksim.sweep(tmp / "spec.toml", backend="ray", output=tmp / f"out{cpus}", quiet=True)
    wall[cpus] = time.perf_counter() - t
    ray.shutdown()
    assert len(df) == 16 and df["error"].isna().all()
print(f"16-point sweep on Ray: 1 CPU {wall[1]:.2f} s, 2 CPUs {wall[2]:.2f} s, ratio {wall[2] / wall[1]:.2f}")
shutil.rmtree(tmp)
