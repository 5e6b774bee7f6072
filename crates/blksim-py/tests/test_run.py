"""blksim from Python against the `blksim` command: same JSON, same report,
errors of the same kind, DataFrames that hold the JSON's numbers, and the
GIL released while the model runs.

The command is the debug build next to this checkout (`cargo build -p
blksim-cli`, which `scripts/test.sh` has run), or BLKSIM_BIN."""

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

import blksim

ROOT = Path(__file__).resolve().parents[3]
JOB = """[global]
ioengine=libaio
direct=1
bs=4k
iodepth=16
number_ios=3000

[reader]
filename=/dev/nvme0n1
rw=randread

[writer]
filename=/dev/nvme1n1
rw=randwrite
"""


def cli():
    b = Path(os.environ.get("BLKSIM_BIN", ROOT / "target" / "debug" / "blksim"))
    assert b.is_file(), f"{b}: the blksim command is needed (cargo build -p blksim-cli, or set BLKSIM_BIN)"
    return b


def without_wall(doc):
    """The JSON with its wall-clock readings removed (they differ between any two runs)."""
    if isinstance(doc, dict):
        return {k: without_wall(v) for k, v in doc.items() if "wall" not in k and k not in ("timestamp", "timestamp_ms", "time")}
    if isinstance(doc, list):
        return [without_wall(v) for v in doc]
    return doc


def run_cli(tmp_path, *args):
    job = tmp_path / "job.fio"
    job.write_text(JOB)
    out = subprocess.run([cli(), "run", job, *args], capture_output=True, text=True, check=True)
    return out.stdout


def test_json_is_the_commands(tmp_path):
    r = blksim.run(JOB, cmdline="intremap=posted_msi", seed=7)
    want = json.loads(run_cli(tmp_path, "--output-format", "json", "--cmdline", "intremap=posted_msi", "--seed", "7"))
    assert without_wall(r.data) == without_wall(want)


def test_report_is_the_commands_normal_output(tmp_path):
    r = blksim.run(JOB)
    want = run_cli(tmp_path)
    # The header's date line is the wall clock's.
    strip = lambda t: [l for l in t.splitlines() if not l.startswith(("blksim:", "fio-")) and "pid=" not in l]
    assert strip(r.report()) == strip(want)
    assert "read: IOPS=" in r.report() and "write: IOPS=" in r.report()


def test_a_path_text_and_dict_are_the_same_job(tmp_path):
    path = tmp_path / "job.fio"
    path.write_text(JOB)
    as_dict = {
        "global": {"ioengine": "libaio", "direct": True, "bs": "4k", "iodepth": 16, "number_ios": 3000},
        "reader": {"filename": "/dev/nvme0n1", "rw": "randread"},
        "writer": {"filename": "/dev/nvme1n1", "rw": "randwrite"},
    }
    results = [blksim.run(j) for j in (path, str(path), JOB, as_dict)]
    first = without_wall(results[0].data)
    for r in results[1:]:
        assert without_wall(r.data) == first


def test_same_seed_same_answer_another_seed_another():
    a, b, c = blksim.run(JOB, seed=3), blksim.run(JOB, seed=3), blksim.run(JOB, seed=4)
    assert without_wall(a.data) == without_wall(b.data)
    assert without_wall(a.data)["jobs"] != without_wall(c.data)["jobs"]


def test_dataframes_hold_the_json_numbers():
    r = blksim.run(JOB)
    jobs = r.jobs
    assert list(jobs["jobname"]) == ["reader", "writer"]
    assert list(jobs["ddir"]) == ["read", "write"]
    assert list(jobs["total_ios"]) == [3000, 3000]
    assert jobs.loc[0, "iops"] == r.data["jobs"][0]["read"]["iops"]
    assert jobs.loc[1, "clat_mean_ns"] == r.data["jobs"][1]["write"]["clat_ns"]["mean"]
    p = r.percentiles
    p99 = p[(p.jobname == "reader") & (p.latency == "clat") & (p.percentile == 99.0)]["ns"]
    assert list(p99) == [r.data["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"]]
    # Every device interrupt counted per CPU adds up to the device's handler runs.
    irqs = r.interrupts
    nvme = irqs[irqs["name"].str.startswith("nvme")]
    assert nvme["count"].sum() == r.disks["irq_handler_runs"].sum() > 0
    cpus = r.cpus
    assert (cpus[["user_ns", "sys_ns", "hardirq_ns", "softirq_ns", "idle_ns", "iowait_ns"]].sum(axis=1) == r.data["blksim"]["sim_time_ns"]).all()
    # Time by stage adds up to the busy time by context, per CPU.
    busy = cpus.set_index("cpu")[["user_ns", "sys_ns", "hardirq_ns", "softirq_ns"]].sum(axis=1)
    staged = r.cpu_stages.groupby("cpu")["ns"].sum()
    assert (staged.reindex(busy.index, fill_value=0) == busy).all()
    assert {"syscall", "driver submit", "irq entry/exit"} <= set(r.cpu_stages["stage"])
    assert "blksim.Result: 2 jobs, 6000 I/Os" in repr(r)


LOG_JOB = """[global]
ioengine=libaio
direct=1
bs=4k
iodepth=8
time_based
runtime=30ms
filename=/dev/nvme0n1
log_avg_msec=5
log_offset=1

[mixed]
rw=randrw
write_lat_log=mixed
write_bw_log=mixed
write_iops_log=mixed
write_hist_log=mixed
log_hist_msec=10
write_iolog=mixed.iolog

[twin]
numjobs=2
rw=randread
per_job_logs=0
write_bw_log=twin
"""


def test_logs_are_the_files_the_command_writes(tmp_path):
    (tmp_path / "cli").mkdir()
    job = tmp_path / "logs.fio"
    job.write_text(LOG_JOB)
    subprocess.run([cli(), "run", job], cwd=tmp_path / "cli", capture_output=True, text=True, check=True)
    r = blksim.run(job)
    written = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert sorted(r.log_files) == written
    assert len(written) == 8, written  # lat, slat, clat, clat_hist, bw, iops (mixed); bw (twin); the iolog
    # write_logs writes the same bytes as the command.
    r.write_logs(tmp_path / "py")
    for name in written:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    # The tables hold the files' numbers, under fio's column names.
    bw = r.logs["mixed_bw.1.log"]
    assert list(bw.columns) == ["time_ms", "value", "ddir", "bs", "offset", "prio"]
    assert set(bw["ddir"]) == {0, 1} and (bw["time_ms"] % 5 == 0).all() and len(bw) >= 10
    first = r.log_files["mixed_bw.1.log"].splitlines()[0].split(", ")
    assert [str(v) for v in bw.iloc[0]] == first
    clat = r.logs["mixed_clat.1.log"]
    assert clat["value"].between(1_000, 10_000_000).all()  # ns
    hist = r.logs["mixed_clat_hist.1.log"]
    assert list(hist.columns[:4]) == ["time_ms", "ddir", "bs", "bin_0"] and hist.shape[1] == 3 + 1856
    # Two jobs of one name share their file; the trace is text only.
    assert r.logs["twin_bw.log"].shape[0] > bw.shape[0] / 2
    assert "mixed.iolog" not in r.logs and r.log_files["mixed.iolog"].startswith("fio version 3 iolog\n")


def test_log_columns_parse_fios_integer_lines_or_give_up():
    # The columns Result.logs builds its Arrow arrays on: each line's integers, or None
    # (log_prio=1's hex, ragged lines, an empty field) for pandas to parse the text.
    import struct

    from blksim import _blksim

    rows, cols = _blksim.log_columns("5, 100, 0, 4096, 0\n10, -3, 1, 4096, 0\n")
    col = lambda i: list(struct.unpack(f"<{rows}q", cols[i]))
    assert (rows, len(cols), col(0), col(1), col(3)) == (2, 5, [5, 10], [100, -3], [4096, 4096])
    for bad in ["5, 1, 0, 4096, 0x0000\n", "1, 2\n3\n", "1,,2\n"]:
        assert _blksim.log_columns(bad) is None, bad
    # A log with log_prio=1 still reads, its prio as text.
    r = blksim.run("[t]\nioengine=null\nsize=1m\nwrite_lat_log=x\nlog_prio=1\n")
    clat = r.logs["x_clat.1.log"]
    assert len(clat) == 256 and str(clat["prio"].iloc[0]).startswith("0x")


def test_verify_state_files_are_fios_and_load_from_the_working_directory(tmp_path, monkeypatch):
    g = {"filename": "/dev/nvme0n1", "direct": 1, "verify": "crc32c", "size": "512k"}
    pre = blksim.run({"global": g, "w": {"rw": "write", "number_ios": 64}})
    assert list(pre.verify_state_files) == ["local-w-0-verify.state"]
    state = pre.verify_state_files["local-w-0-verify.state"]
    assert state[:8] == (5).to_bytes(8, "little") and state[32:40] == (64).to_bytes(8, "little")
    assert pre.write_logs(tmp_path) == [str(tmp_path / "local-w-0-verify.state")]
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning, match="Stop verify because seq 64 >= 64"):
        post = blksim.run({"global": g, "w": {"rw": "read", "verify_state_load": 1}})
    assert post.report().startswith("Stop verify because seq 64 >= 64\n")
    assert post.jobs.loc[0, "io_bytes"] == 256 * 1024


def test_terse_and_sections_are_the_commands(tmp_path):
    job = tmp_path / "sections.fio"
    job.write_text(JOB)
    cmd = subprocess.run([cli(), "run", job, "--section", "writer", "--minimal", "--seed", "3"],
                         capture_output=True, text=True, check=True).stdout
    r = blksim.run(job, sections="writer", seed=3)
    assert list(r.jobs["jobname"]) == ["writer"]
    # The lines agree but for nothing (the wall clock is not in them).
    assert r.terse() == cmd
    assert r.terse(5).startswith("5;") and len(r.terse(5).split(";")) > len(cmd.split(";"))
    cmd2 = subprocess.run([cli(), "run", job, "--section", "writer", "--minimal", "--seed", "3",
                           "--terse-version", "2"], capture_output=True, text=True, check=True).stdout
    assert r.terse(2) == cmd2 and cmd2.startswith("2;writer;")
    with pytest.raises(blksim.BadInput, match="expected one of"):
        r.terse(6)


def test_bad_input_names_the_file_and_line():
    with pytest.raises(blksim.BadInput, match=r"<text>:3") as e:
        blksim.run("[j]\nfilename=/dev/nvme0n1\nrw=sideways\n")
    assert isinstance(e.value, blksim.BlksimError)
    with pytest.raises(blksim.BadInput, match="no-such-machine"):
        blksim.run(JOB, machine="no-such-machine")
    with pytest.raises(blksim.BadInput, match="no such job file"):
        blksim.run("missing.fio")
    with pytest.raises(TypeError):
        blksim.run(42)
    with pytest.raises(TypeError):
        blksim.run({"global": {"bs": "4k"}, "rw": "read"})


def test_not_modelled_is_its_own_kind():
    with pytest.raises(blksim.NotModelled, match="page cache"):
        blksim.run({"filename": "/dev/nvme0n1", "rw": "read", "direct": 0, "number_ios": 1})


def test_an_option_without_effect_warns():
    with pytest.warns(UserWarning, match="block_error_percentiles"):
        blksim.run({"filename": "/dev/nvme0n1", "ioengine": "libaio", "direct": 1, "rw": "read",
                    "number_ios": 10, "block_error_percentiles": 1})


def test_the_gil_is_released_while_the_model_runs():
    job = {"filename": "/dev/nvme0n1", "ioengine": "libaio", "direct": 1, "rw": "randread",
           "iodepth": 32, "time_based": True, "runtime": "1500ms"}
    t = threading.Thread(target=blksim.run, args=(job,))
    start = time.perf_counter()
    t.start()
    ticks = 0
    while t.is_alive():
        ticks += 1
        time.sleep(0.001)
    elapsed = time.perf_counter() - start
    assert elapsed > 0.1, "the run was too short to tell"
    # Held, the GIL would have let this loop run once or twice; released, about once a
    # millisecond (a tenth of that on a busy machine is still far from once).
    assert ticks > elapsed * 1000 / 10, (ticks, elapsed)


def test_machines_and_options():
    assert "spr-gen5" in blksim.machines()
    m = blksim.machine("spr-gen5")
    assert m["cpus"] == 128 and len(m["devices"]) >= 8
    o = blksim.options()
    assert set(o.columns) == {"name", "alias", "syntax", "table", "status", "why"}
    assert o.set_index("name").loc["iodepth", "status"] == "modelled"
    assert (o["status"] == "rejected").any()


def test_help_reads_like_the_man_page():
    doc = blksim.run.__doc__
    for word in ("job", "machine", "cmdline", "sets", "patches", "seed", "BadInput", "NotModelled"):
        assert word in doc


def test_t_io_uring_is_the_commands():
    r = blksim.t_io_uring("-d32 -b4096 -p0 -n1 -r0.002 /dev/nvme0n1", machine="x86-gen5-5m")
    want = subprocess.run([cli(), "t-io_uring", "--machine", "x86-gen5-5m", "-d32", "-b4096", "-p0", "-n1", "-r0.002",
                           "/dev/nvme0n1"], capture_output=True, text=True, check=True).stdout
    assert r.text == want
    assert f"Maximum IOPS=" in r.text and r.iops > 0
    with pytest.raises(blksim.BadInput):
        blksim.t_io_uring("-d32 /dev/nvme9n1", machine="x86-gen5-5m")


def test_reproduce_is_the_commands():
    df = blksim.reproduce("rq-affinity")
    want = json.loads(subprocess.run([cli(), "reproduce", "rq-affinity", "--format", "json"], capture_output=True,
                                     text=True, check=True).stdout)
    cells = want["experiments"][0]["cells"]
    assert list(df["label"]) == [c["label"] for c in cells]
    assert list(df["simulated"]) == [c["simulated"] for c in cells]
    assert (df["experiment"] == "rq-affinity").all() and df.attrs["summary"] == want["summary"]
    with pytest.raises(blksim.BadInput):
        blksim.reproduce("no-such-experiment")


def test_ctrl_c_stops_a_run():
    import _thread

    job = {"filename": "/dev/nvme0n1", "ioengine": "libaio", "direct": 1, "rw": "randread",
           "iodepth": 32, "time_based": True, "runtime": "100s"}
    timer = threading.Timer(0.3, _thread.interrupt_main)
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        blksim.run(job)
    # 100 s of simulated time takes minutes; stopped, it takes the 0.3 s and a look or two.
    assert time.perf_counter() - start < 5
    # The package still works after.
    assert blksim.run({"filename": "/dev/nvme0n1", "rw": "read", "direct": 1, "number_ios": 5}).jobs.loc[0, "total_ios"] == 5


def test_a_patchs_own_knobs_are_set_after_it():
    # GSIM's /proc/irq/soft_moderation exists only with the patch: the sets come after the patches.
    job = {"filename": "/dev/nvme0n1", "ioengine": "libaio", "direct": 1, "rw": "randread", "iodepth": 32,
           "time_based": 1, "runtime": "20ms", "numjobs": 4, "cpus_allowed": "0-3", "cpus_allowed_policy": "split"}
    r = blksim.run(job, patches=["gsim"], sets={"/proc/irq/soft_moderation/target_intr_rate": 10000})
    gsim = r.data["blksim"]["gsim"]
    assert gsim["moderated"] > 0 and gsim["held"] > 0
    with pytest.raises(blksim.BadInput, match="--patch gsim"):
        blksim.run(job, sets={"/proc/irq/soft_moderation/delay_us": 50})
