"""Sweeps from Python: `blksim sweep`'s spec, points run on threads or as Ray
tasks, each finished point written at once into a Parquet dataset (one file
per point), resumable."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Union

from . import _blksim

try:  # Python 3.11+
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - 3.9/3.10
    import tomli as _toml  # type: ignore


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string is a JSON string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"sweep spec: {v!r} is not a value a spec holds (strings, numbers, booleans, lists of them)")


def _spec_file(spec: Union[str, "os.PathLike[str]", Mapping[str, Any]], output: Path) -> Path:
    """The spec as a file: the path given, or a dict written into the output directory (its job and
    machine paths made absolute, as they are read relative to the spec)."""
    if not isinstance(spec, Mapping):
        path = Path(spec)
        if not path.is_file():
            raise _blksim.BadInput(f"{path}: no such sweep spec")
        return path
    spec = dict(spec)
    for k in ("job", "machine"):
        if k in spec and Path(str(spec[k])).exists():
            spec[k] = str(Path(str(spec[k])).resolve())
    axes = spec.pop("axes", None)
    if not isinstance(axes, Mapping):
        raise _blksim.BadInput("sweep spec: 'axes' is a dict of lists of values")
    lines = [f"{k} = {_toml_value(v)}" for k, v in spec.items()]
    lines.append("[axes]")
    lines += [f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in axes.items()]
    output.mkdir(parents=True, exist_ok=True)
    path = output / "spec.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _axis_types(path: Path) -> Dict[str, str]:
    """Each axis column's type, as its values are (the CLI's Parquet: int64, float64 or string)."""
    axes = _toml.loads(path.read_text()).get("axes", {})
    types = {}
    for name, values in axes.items():
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            types[name] = "int64"
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            types[name] = "float64"
        else:
            types[name] = "string"
    return types


def _build_id() -> str:
    """Which blksim ran a point: a hash of the extension module (a rebuilt blksim runs every point again)."""
    h = hashlib.sha256()
    with open(_blksim.__file__, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def _frame(rows: List[List[str]], columns: List[str], metrics: List[str], types: Dict[str, str]):
    import pandas as pd

    return _typed(pd.DataFrame(rows, columns=columns), metrics, types)


def _typed(df, metrics: List[str], types: Dict[str, str]):
    """The sweep's table with its types (rows as text, or read back from the dataset)."""
    import pandas as pd

    df["point"] = df["point"].astype("int64")
    for name, t in types.items():
        df[name] = df[name].astype(t)
    for m in metrics:
        df[m] = pd.to_numeric(df[m].replace("", None), errors="coerce").astype("float64")
    # No error: null, as a finished point's missing metrics are.
    df["error"] = df["error"].replace("", None).astype("string")
    df["key"] = df["key"].astype("string")
    return df


def _arrow_row(row: List[str], columns: List[str], metrics: List[str], types: Dict[str, str]):
    """One point's row as an Arrow table with the sweep's types (cheaper than a DataFrame: the
    driver writes one per finished point while the workers run)."""
    import pyarrow as pa

    arrow = {"int64": pa.int64(), "float64": pa.float64(), "string": pa.string()}
    kinds = dict.fromkeys(metrics, "float64")
    kinds.update(types, point="int64", error="string", key="string")
    arrays = []
    for name, text in zip(columns, row):
        kind = kinds[name]
        if text == "" and kind != "string" or name == "error" and text == "":
            value = None
        elif kind == "int64":
            value = int(text)
        elif kind == "float64":
            value = float(text)
        else:
            value = text
        arrays.append(pa.array([value], type=arrow[kind]))
    return pa.Table.from_arrays(arrays, names=columns)


def _run_point(path: str, i: int, build: str) -> List[str]:
    row = _blksim.sweep_point(path, i)
    row[-1] = f"{row[-1]}-{build}" if row[-1] else ""
    return row


def _progress(total: int, quiet: bool):
    if quiet or total == 0:
        return lambda: None, lambda: None
    try:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="point", desc="blksim sweep")
        return (lambda: bar.update(1)), bar.close
    except ImportError:
        done = [0]

        def step():
            done[0] += 1
            print(f"\rblksim sweep: {done[0]}/{total} points", end="", file=sys.stderr, flush=True)

        return step, (lambda: print(file=sys.stderr))


def sweep(
    spec: Union[str, "os.PathLike[str]", Mapping[str, Any]],
    backend: str = "local",
    output: Union[None, str, "os.PathLike[str]"] = None,
    workers: Optional[int] = None,
    quiet: bool = False,
):
    """Run a sweep and return its table as a pandas DataFrame (point, each axis, the metrics,
    error, key), sorted by point.

    spec
        ``blksim sweep``'s TOML spec file, or the same as a dict
        (``{"job": "job.fio", "machine": "spr-gen5", "seed": 1, "axes": {"iodepth": [1, 8, 32]}}``).
    backend
        ``"local"``: threads on this machine (``workers``, default every core; the model releases
        the GIL); ``"ray"``: one Ray task (1 CPU) per point on the cluster ``ray.init()``
        connected to (a local one if none). Files the spec names must be readable by the workers.
    output
        The Parquet dataset's directory (default: the spec's path without ``.toml``, plus
        ``.sweep``): one file per point, ``part-NNNNNN.parquet``, written as the point finishes;
        ``pandas.read_parquet(output)`` reads the table (``error`` is null where the point ran). A rerun keeps the points whose key (the
        point as resolved and the blksim build) is the same and which did not fail, and runs the rest.

    A point that fails is a row with its error, not a lost sweep. Progress goes to stderr
    (tqdm if installed) unless ``quiet``.
    """
    import pandas as pd

    if backend not in ("local", "ray"):
        raise ValueError(f"backend: 'local' or 'ray', not {backend!r}")
    if output is None:
        if isinstance(spec, Mapping):
            output = Path(tempfile.mkdtemp(prefix="blksim-sweep-"))
        else:
            output = Path(spec).with_suffix(".sweep")
    output = Path(output)
    path = _spec_file(spec, output)
    columns, points, metrics = _blksim.sweep_spec(str(path))
    types = _axis_types(path)
    build = _build_id()
    output.mkdir(parents=True, exist_ok=True)
    # Points done before, as they are now.
    keep = {}
    for part in sorted(output.glob("part-*.parquet")):
        old = pd.read_parquet(part)
        if list(old.columns) != columns or len(old) != 1:
            part.unlink()
            continue
        i = int(old["point"].iloc[0])
        ok = pd.isna(old["error"].iloc[0]) or old["error"].iloc[0] == ""
        if i < points and ok and old["key"].iloc[0] == f"{_blksim.sweep_key(str(path), i)}-{build}":
            keep[i] = old
        else:
            part.unlink()
    todo = [i for i in range(points) if i not in keep]
    fresh: Dict[int, List[str]] = {}
    if keep:
        print(f"blksim sweep: {len(keep)} of {points} points already in {output}; running the other {len(todo)}",
              file=sys.stderr)
    step, close = _progress(len(todo), quiet)

    import pyarrow.parquet as pq

    def write(row: List[str]):
        i = int(row[0])
        tmp = output / f".part-{i:06d}.parquet.tmp"
        pq.write_table(_arrow_row(row, columns, metrics, types), tmp)
        tmp.replace(output / f"part-{i:06d}.parquet")
        fresh[i] = row
        step()

    try:
        if backend == "local":
            with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
                futures = [pool.submit(_run_point, str(path), i, build) for i in todo]
                for f in as_completed(futures):
                    write(f.result())
        else:
            import ray

            if not ray.is_initialized():
                ray.init(num_cpus=workers)
            task = ray.remote(num_cpus=1)(_run_point)
            # With a working_dir the workers find the spec where the driver names it, relative to
            # that directory; without one, where the driver has it.
            env = ray.get_runtime_context().runtime_env or {}
            where = str(path) if env.get("working_dir") and not path.is_absolute() else str(path.resolve())
            pending = [task.remote(where, i, build) for i in todo]
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for r in ready:
                    write(ray.get(r))
    finally:
        close()
    parts = [_frame([fresh[i] for i in sorted(fresh)], columns, metrics, types)] + list(keep.values())
    table = _typed(pd.concat(parts, ignore_index=True).sort_values("point", ignore_index=True), metrics, types)
    table.attrs["ran"] = len(todo)
    table.attrs["output"] = str(output)
    return table
