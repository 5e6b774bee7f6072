"""What a run gives, as text (fio's own formats) and as pandas DataFrames."""

from __future__ import annotations

import json as _json
from functools import cached_property
from typing import Dict, List

DIRECTIONS = ("read", "write", "trim")
# The latency families of a fio direction, in fio's JSON.
LATENCIES = ("slat_ns", "clat_ns", "lat_ns")


class Result:
    """One run's answers.

    ``json`` is fio's JSON document exactly as ``blksim run --output-format json``
    prints it (with blksim's own ``blksim`` object); ``report()`` is fio's normal
    output. The DataFrames are views of the same numbers:

    - ``jobs``: one row per job and direction that did I/O (fio's fields: I/Os,
      bytes, bandwidth, IOPS, runtime, and slat/clat/lat min, max, mean, stddev in ns);
    - ``percentiles``: job, direction, latency (``clat``, ``lat``, ``slat``), percentile, ns;
    - ``histogram`` (``run(..., histogram=True)``): the latency histograms' buckets;
    - ``cpus``: per CPU that did anything, time by context (user, sys, hardirq,
      softirq, idle, iowait) in ns and %; ``cpu_stages``: its busy time by stage of the I/O path;
    - ``interrupts``: per IRQ (and system vector) and CPU, its count (``/proc/interrupts``);
    - ``disks``: per block device, IOPS, utilisation, MSIs and handler runs;
    - ``locks``: per contended lock, what blksim measured of it;
    - ``interrupt_path``: per root port, remapping unit and delivery stage, messages and busy %;
    - ``logs``: fio's log files the job asks for (``write_lat_log``, ``write_bw_log``,
      ``write_iops_log``, ``write_hist_log``), one DataFrame per file; ``log_files``: their
      texts (and ``write_iolog``'s trace) as fio writes them; ``verify_state_files``: the verify
      state a writing, verifying job saves (``verify_state_save``); ``write_logs(dir)`` writes them all.
    """

    def __init__(self, json_text: str, normal_text: str, warnings: List[str], stages=(), logs=(), states=()):
        self.json = json_text
        self._normal = normal_text
        self.warnings = warnings
        self._stages = stages
        self._logs = list(logs)
        self.verify_state_files: Dict[str, bytes] = dict(states)
        """The verify state files fio leaves at the end of a job that writes and verifies
        (``verify_state_save``, on by default): ``local-NAME-N-verify.state`` → its bytes, in fio
        3.42's format; a later ``run`` with ``verify_state_load=1`` reads them from the working
        directory."""

    def __repr__(self) -> str:
        b = self.data["blksim"]
        ios = sum(j[d]["total_ios"] for j in self.data["jobs"] for d in DIRECTIONS)
        return f"<blksim.Result: {len(self.data['jobs'])} jobs, {ios} I/Os, {b['sim_time_ns']} ns simulated on {b['machine']['name']}>"

    @property
    def has_histogram(self) -> bool:
        """Whether the run kept its latency histograms (``run(..., histogram=True)``)."""
        return '"bins"' in self.json

    def report(self) -> str:
        """fio's normal output (``blksim run --output-format normal``)."""
        return self._normal

    def terse(self, version: int = 3) -> str:
        """fio's terse lines (``blksim run --output-format terse --terse-version N``): one
        ``;``-separated line per job, version 3 (fio's default), 2, 4 or 5."""
        from . import _blksim

        return _blksim.terse(self.json, int(version))

    @cached_property
    def data(self) -> dict:
        """The JSON document, parsed."""
        return _json.loads(self.json)

    @cached_property
    def jobs(self):
        import pandas as pd

        rows = []
        for j in self.data["jobs"]:
            for d in DIRECTIONS:
                s = j[d]
                if s["total_ios"] == 0:
                    continue
                row = {
                    "jobname": j["jobname"],
                    "groupid": j["groupid"],
                    "ddir": d,
                    "error": j["error"],
                    "total_ios": s["total_ios"],
                    "io_bytes": s["io_bytes"],
                    "bw_bytes": s["bw_bytes"],
                    "iops": s["iops"],
                    "runtime_ms": s["runtime"],
                }
                for lat in LATENCIES:
                    for k in ("min", "max", "mean", "stddev"):
                        row[f"{lat[:-3]}_{k}_ns"] = s[lat][k]
                row.update(usr_cpu=j["usr_cpu"], sys_cpu=j["sys_cpu"], ctx=j["ctx"])
                rows.append(row)
        return pd.DataFrame(rows)

    @cached_property
    def percentiles(self):
        import pandas as pd

        rows = []
        for j in self.data["jobs"]:
            for d in DIRECTIONS:
                s = j[d]
                for lat in LATENCIES:
                    for p, ns in s[lat].get("percentile", {}).items():
                        rows.append((j["jobname"], d, lat[:-3], float(p), ns))
        return pd.DataFrame(rows, columns=["jobname", "ddir", "latency", "percentile", "ns"])

    @cached_property
    def histogram(self):
        """The latency histograms' buckets (``run(..., histogram=True)``): job, direction,
        latency (``clat``, ``lat``, ``slat``), ns (the bucket's value, as fio's json+ ``bins``), count."""
        import pandas as pd

        if not self.has_histogram:
            raise ValueError("no histogram: run with blksim.run(..., histogram=True)")
        rows = []
        for j in self.data["jobs"]:
            for d in DIRECTIONS:
                for lat in LATENCIES:
                    bins = j[d][lat].get("bins", {})
                    rows += [(j["jobname"], d, lat[:-3], int(ns), n) for ns, n in bins.items()]
        return pd.DataFrame(rows, columns=["jobname", "ddir", "latency", "ns", "count"])

    def plot_latency(self, latency: str = "clat", ax=None):
        """Completion latency (or ``lat``, ``slat``) of each job and direction: its percentiles
        against the latency, and with ``histogram=True`` the histogram beneath. Returns the axes."""
        from ._plot import plot_latency

        return plot_latency(self, latency, ax)

    def plot_cpu(self, ax=None):
        """Each CPU's time by context (user, sys, hardirq, softirq, iowait, idle) as stacked bars,
        in % of the simulated time. Returns the axes."""
        from ._plot import plot_cpu

        return plot_cpu(self, ax)

    @cached_property
    def cpu_stages(self):
        """Each CPU's busy time by stage of the I/O path (the ``--breakdown`` stages: user loop,
        syscall, engine submit, block layer, driver submit, doorbell, dma map, polling, irq
        entry/exit, softirq, wake-up...), the non-zero ones: cpu, stage, ns. Per CPU they add up
        to its user + sys + hardirq + softirq time in ``cpus``."""
        import pandas as pd

        return pd.DataFrame(list(self._stages), columns=["cpu", "stage", "ns"])

    @cached_property
    def cpus(self):
        import pandas as pd

        return pd.DataFrame(self.data["blksim"]["cpu_time"])

    @cached_property
    def interrupts(self):
        import pandas as pd

        rows = [
            (r["label"], r.get("name", ""), r.get("chip", ""), int(cpu), n)
            for r in self.data["blksim"]["interrupts"]
            for cpu, n in r["per_cpu"].items()
        ]
        return pd.DataFrame(rows, columns=["irq", "name", "chip", "cpu", "count"])

    @cached_property
    def disks(self):
        import pandas as pd

        return pd.DataFrame(self.data["blksim"]["disks"])

    @cached_property
    def locks(self):
        import pandas as pd

        return pd.DataFrame(self.data["blksim"]["locks"])

    @cached_property
    def interrupt_path(self):
        import pandas as pd

        return pd.DataFrame(self.data["blksim"]["interrupt_path"])

    @property
    def log_files(self) -> Dict[str, str]:
        """fio's log files the job asks for, by the path fio writes each to (relative to the working
        directory, as ``blksim run`` writes them): their texts, byte for byte. Nothing is written
        until :meth:`write_logs`. A file shared by the jobs of one name (``per_job_logs=0``) holds
        each job's lines in turn; shared files and ``write_iolog``'s trace are what this run adds
        to them (fio appends)."""
        files: Dict[str, str] = {}
        for path, text, _, _ in self._logs:
            files[path] = files.get(path, "") + text
        return files

    @cached_property
    def logs(self):
        """fio's latency, bandwidth, IOPS and clat histogram logs as DataFrames, by file path (see
        :attr:`log_files`). Columns as fio's documentation names them: ``time_ms``, ``value``
        (``value_max`` with ``log_window_value=both``), ``ddir`` (0 read, 1 write, 2 trim),
        ``bs``, ``offset`` (``log_offset=1``), ``prio``, ``issue_time_ns``
        (``log_issue_time=1``); a clat_hist log's bins are ``bin_0``, ``bin_1``... ``prio`` is
        text when ``log_prio=1`` (``0x0000``), else an integer. ``write_iolog``'s trace is not a
        table: it is only in :attr:`log_files`."""
        import io

        import pandas as pd

        texts = self.log_files
        frames = {}
        for path, _, _, columns in self._logs:
            if not columns or path in frames:
                continue
            text = texts[path]
            if not text:
                frames[path] = pd.DataFrame(columns=list(columns))
                continue
            df = _log_frame(text)
            if df is None:
                df = pd.read_csv(io.StringIO(text), header=None, skipinitialspace=True)
            names = list(columns)
            names += [f"bin_{i}" for i in range(df.shape[1] - len(names))]
            df.columns = names[: df.shape[1]]
            frames[path] = df
        return frames

    def write_logs(self, directory=".") -> List[str]:
        """Write :attr:`log_files` and :attr:`verify_state_files` under ``directory`` as
        ``blksim run`` writes them in its working directory (appending where fio appends).
        Returns the paths written."""
        import os

        written = []
        os.makedirs(os.fspath(directory), exist_ok=True)
        for path, text, append, _ in self._logs:
            target = os.path.join(os.fspath(directory), path)
            parent = os.path.dirname(target)
            if parent:
                os.makedirs(parent, exist_ok=True)
            with open(target, "a" if append else "w", encoding="utf-8") as f:
                f.write(text)
            written.append(target)
        for name, data in self.verify_state_files.items():
            target = os.path.join(os.fspath(directory), name)
            with open(target, "wb") as f:
                f.write(data)
            written.append(target)
        return written


def _log_frame(text: str):
    """A log of integers as a DataFrame over Arrow arrays of the columns blksim parsed (no text
    parsed in Python, no copy of the numbers after it); None when it is not all integers."""
    import pyarrow as pa

    from . import _blksim

    cols = _blksim.log_columns(text)
    if cols is None:
        return None
    rows, buffers = cols
    arrays = [pa.Array.from_buffers(pa.int64(), rows, [None, pa.py_buffer(b)]) for b in buffers]
    return pa.Table.from_arrays(arrays, names=[str(i) for i in range(len(arrays))]).to_pandas()
