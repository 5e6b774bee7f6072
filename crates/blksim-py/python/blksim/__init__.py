"""blksim from Python: the Linux host storage I/O path, simulated, for fio jobs.

    >>> import blksim
    >>> r = blksim.run({"filename": "/dev/nvme0n1", "ioengine": "io_uring", "direct": 1,
    ...                 "rw": "randread", "bs": "4k", "iodepth": 32, "number_ios": 10000},
    ...                cmdline="intremap=posted_msi")
    >>> r.jobs[["jobname", "ddir", "iops", "clat_mean_ns"]]
    >>> print(r.report())

The model runs in Rust (the same code and outputs as the `blksim` command's
``run``), with the GIL released; this package shapes its answers for pandas.
Errors are exceptions carrying the command's message: :class:`BadInput`,
:class:`NotModelled`, :class:`InternalError` (all :class:`BlksimError`).
"""

from __future__ import annotations

import os
import warnings as _warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Sequence, Union

from . import _blksim
from ._blksim import BadInput, BlksimError, InternalError, NotModelled, __version__
from ._result import Result

if TYPE_CHECKING:
    import pandas as pd
from ._job import job_text
from ._sweep import sweep
from ._plot import sweep_plot

__all__ = [
    "run",
    "machines",
    "t_io_uring",
    "TIoUringResult",
    "reproduce",
    "machine",
    "options",
    "job_text",
    "sweep",
    "sweep_plot",
    "Result",
    "BlksimError",
    "BadInput",
    "NotModelled",
    "InternalError",
    "__version__",
]

JobLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def _strings(value: Union[None, str, Sequence[str]], what: str) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TypeError(f"{what}: expected a string or a list of strings, got {type(value).__name__}")


def _sets(value: Union[None, Mapping[str, Any], Sequence[str]]) -> list:
    if isinstance(value, Mapping):
        return [f"{k}={v}" for k, v in value.items()]
    return _strings(value, "sets")


def run(
    job: JobLike,
    machine: Optional[str] = None,
    cmdline: Union[None, str, Sequence[str]] = None,
    sets: Union[None, Mapping[str, Any], Sequence[str]] = None,
    patches: Union[None, str, Sequence[str]] = None,
    at: Union[None, str, Sequence[str]] = None,
    seed: int = 1,
    histogram: bool = False,
    sections: Union[None, str, Sequence[str]] = None,
) -> Result:
    """Simulate a fio job on a machine and return its :class:`Result`.

    Parameters (each is the ``blksim run`` option of the same name):

    job
        A fio job file's path (``str`` or ``pathlib.Path``), a job file's text
        (a ``str`` holding a newline), or a ``dict`` of fio options: one job
        (``{"rw": "randread", ...}``, named by its ``"name"`` key, else
        ``"job"``) or sections (``{"global": {...}, "a": {...}}``, every value a
        dict). Option values: ``True``/``False`` are ``1``/``0``, ``None`` writes
        the bare option (``"norandommap": None``).
    machine
        A built-in machine (:func:`machines`) or a profile file; default ``spr-gen5``.
    cmdline
        Kernel command-line parameters: ``"intremap=posted_msi nvme.poll_queues=4"``
        or a list of such strings.
    sets
        sysfs writes before the run: ``{"/sys/block/nvme0n1/queue/rq_affinity": 2}``
        or ``["/sys/...=2"]``.
    patches
        Kernel patches to apply (``"mq-deadline-2024"``, ``"hybrid-iopoll"``...).
    at
        Writes at points of simulated time: ``"5ms:/proc/irq/128/smp_affinity_list=3"``.
    seed
        Seed of the run's random streams: same inputs and seed, same result.
    histogram
        Keep the latency histograms: ``json`` is then fio's ``json+`` (``--output-format
        json+``) and ``Result.histogram`` has their buckets.
    sections
        fio's ``--section``: only the job sections of these names (``[global]`` always).

    Raises :class:`BadInput` (a wrong job, option, knob or profile; the message
    names the file and line), :class:`NotModelled` (valid input blksim cannot
    simulate yet) or :class:`InternalError` (a failure of blksim itself).
    A job that ends on an I/O error is not an exception: its ``error`` field says it.
    """
    kw = dict(
        machine=machine,
        cmdline=_strings(cmdline, "cmdline"),
        sets=_sets(sets),
        patches=_strings(patches, "patches"),
        at=_strings(at, "at"),
        seed=int(seed),
        json_plus=bool(histogram),
        sections=_strings(sections, "sections"),
    )
    if isinstance(job, Mapping):
        out = _blksim.run(text=job_text(job), name="<dict>", **kw)
    elif isinstance(job, os.PathLike) or (isinstance(job, str) and "\n" not in job):
        path = Path(job)
        if not path.is_file():
            raise BadInput(f"{path}: no such job file (give a path, a job file's text, or a dict of fio options)")
        out = _blksim.run(path=str(path), **kw)
    elif isinstance(job, str):
        out = _blksim.run(text=job, name="<text>", **kw)
    else:
        raise TypeError(f"job: expected a path, a job file's text or a dict of fio options, got {type(job).__name__}")
    json_text, normal_text, warnings, stages, logs, states = out
    for w in warnings:
        _warnings.warn(w, stacklevel=2)
    return Result(json_text, normal_text, list(warnings), stages, logs, states)


class TIoUringResult:
    """What ``t_io_uring`` gives: ``text`` (t/io_uring's lines), ``iops`` (its ``Maximum IOPS``,
    unrounded) and ``warnings``."""

    def __init__(self, text: str, iops: float, warnings: List[str]):
        self.text, self.iops, self.warnings = text, iops, warnings

    def __repr__(self) -> str:
        return f"<blksim.TIoUringResult: {self.iops:,.0f} IOPS>"


def t_io_uring(
    args: Union[str, Sequence[str]],
    machine: Optional[str] = None,
    cmdline: Union[None, str, Sequence[str]] = None,
    sets: Union[None, Mapping[str, Any], Sequence[str]] = None,
    patches: Union[None, str, Sequence[str]] = None,
    seed: int = 1,
) -> TIoUringResult:
    """fio's t/io_uring benchmark on a machine (``blksim t-io_uring``).

    ``args`` are t/io_uring's own options and devices, as a string (``"-d128 -b512 -p0
    /dev/nvme0n1"``) or a list; the other parameters are :func:`run`'s."""
    import shlex

    argv = shlex.split(args) if isinstance(args, str) else _strings(args, "args")
    text, iops, warnings = _blksim.t_io_uring(
        argv,
        machine=machine,
        cmdline=_strings(cmdline, "cmdline"),
        sets=_sets(sets),
        patches=_strings(patches, "patches"),
        seed=int(seed),
    )
    for w in warnings:
        _warnings.warn(w, stacklevel=2)
    return TIoUringResult(text, iops, list(warnings))


def reproduce(
    names: Union[None, str, Sequence[str]] = None,
    dir: Union[None, str, "os.PathLike[str]"] = None,
    seed: Optional[int] = None,
    threads: int = 0,
) -> "pd.DataFrame":
    """The calibration experiments (``blksim reproduce``): each named one (all when ``names``
    is None) from ``dir`` (default: the source tree's ``experiments/``), run on ``threads``
    cores (0: all) with ``seed`` (default: each experiment's own), compared with the published
    numbers. Returns a DataFrame, one row per cell: experiment, label, case, metric, published,
    simulated, error (relative), tolerance, within, status (``pass``, ``fail``, ``pending``,
    ``gap``), note; ``df.attrs["summary"]`` holds the summary."""
    import json

    import pandas as pd

    doc = json.loads(
        _blksim.reproduce(
            _strings(names, "names"), dir=None if dir is None else str(dir), seed=seed, threads=int(threads)
        )
    )
    rows = [dict(experiment=e["name"], **c) for e in doc["experiments"] for c in e["cells"]]
    df = pd.DataFrame(rows)
    df.attrs["summary"] = doc["summary"]
    return df


def machines() -> str:
    """The built-in machines, one per line (``blksim machines``)."""
    return _blksim.machines()


def machine(name: str) -> dict:
    """One machine, a built-in name or a profile file, as a run's ``blksim.machine`` object."""
    import json

    return json.loads(_blksim.machine(name))


def options() -> "pd.DataFrame":
    """Every fio option blksim knows and what it does with it (``blksim options``), as a DataFrame:
    ``name``, ``alias``, ``syntax``, ``table`` (``general`` or the ioengines), ``status``
    (``modelled``, ``no effect``, ``no effect, warns``, ``rejected``, ``deprecated``) and ``why``."""
    import pandas as pd

    return pd.DataFrame(_blksim.options(), columns=["name", "alias", "syntax", "table", "status", "why"])
