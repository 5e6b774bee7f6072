"""A fio job file's text from a dict of options."""

from __future__ import annotations

from typing import Any, Mapping


def _value(name: str, v: Any) -> str:
    if v is None:
        return name
    if isinstance(v, bool):
        return f"{name}={int(v)}"
    if isinstance(v, (int, float, str)):
        text = str(v)
        if "\n" in text:
            raise ValueError(f"option {name!r}: a value cannot hold a newline")
        return f"{name}={text}"
    raise TypeError(f"option {name!r}: expected a string, a number, a bool or None, got {type(v).__name__}")


def _section(name: str, options: Mapping[str, Any]) -> str:
    lines = [f"[{name}]"]
    for k, v in options.items():
        if not isinstance(k, str) or not k:
            raise TypeError(f"section [{name}]: option names are non-empty strings, got {k!r}")
        lines.append(_value(k, v))
    return "\n".join(lines) + "\n"


def job_text(job: Mapping[str, Any]) -> str:
    """The job file a dict stands for.

    ``{"rw": "randread", "bs": "4k"}`` is one job, ``[job]`` (or the value of its
    ``"name"`` key); a dict whose values are all dicts is sections in order
    (``{"global": {...}, "reader": {...}}``)."""
    if not job:
        raise ValueError("job: an empty dict names no fio option")
    if all(isinstance(v, Mapping) for v in job.values()):
        return "\n".join(_section(str(name), opts) for name, opts in job.items())
    if any(isinstance(v, Mapping) for v in job.values()):
        raise TypeError("job: either every value is a dict (sections) or none is (one job's options)")
    options = dict(job)
    name = str(options.pop("name", "job"))
    return _section(name, options)
