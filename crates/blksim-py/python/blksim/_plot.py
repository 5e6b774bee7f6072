"""Pictures of a run and of a sweep (matplotlib; usable in a notebook)."""

from __future__ import annotations

CONTEXTS = ("user", "sys", "hardirq", "softirq", "iowait", "idle")


def _axes(ax):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(7, 4))[1]


def plot_latency(result, latency: str = "clat", ax=None):
    if latency not in ("clat", "lat", "slat"):
        raise ValueError(f"latency: 'clat', 'lat' or 'slat', not {latency!r}")
    ax = _axes(ax)
    p = result.percentiles
    p = p[p.latency == latency]
    if p.empty:
        raise ValueError(f"no {latency} percentiles in this run (fio reports them only for directions that did I/O)")
    for (job, ddir), g in p.groupby(["jobname", "ddir"], sort=False):
        ax.plot(g["ns"] / 1e3, g["percentile"], marker=".", label=f"{job} {ddir}")
    ax.set_xscale("log")
    ax.set_xlabel(f"{latency} (us)")
    ax.set_ylabel("percentile")
    if result.has_histogram:
        h = result.histogram
        h = h[h.latency == latency]
        twin = ax.twinx()
        for (job, ddir), g in h.groupby(["jobname", "ddir"], sort=False):
            twin.bar(g["ns"] / 1e3, g["count"], width=g["ns"] / 1e3 * 0.02, alpha=0.3, label=f"{job} {ddir} I/Os")
        twin.set_ylabel("I/Os per bucket")
    ax.legend(loc="lower right")
    ax.set_title(f"{latency} latency")
    return ax


def plot_cpu(result, ax=None):
    ax = _axes(ax)
    c = result.cpus
    bottom = None
    for ctx in CONTEXTS:
        col = c[f"{ctx}_pct"]
        ax.bar(c["cpu"].astype(str), col, bottom=bottom, label=ctx)
        bottom = col if bottom is None else bottom + col
    ax.set_xlabel("CPU")
    ax.set_ylabel("% of simulated time")
    ax.legend(loc="upper right", fontsize="small")
    ax.set_title("CPU time by context")
    return ax


def sweep_plot(df, x: str, y: str, hue=None, ax=None):
    """A sweep's metric ``y`` against axis ``x``, one line per value of ``hue`` (an axis, or
    none). Failed points (no value) are left out. Returns the axes."""
    for name in (x, y) + ((hue,) if hue else ()):
        if name not in df.columns:
            raise KeyError(f"{name!r} is not a column of the sweep ({', '.join(map(str, df.columns))})")
    ax = _axes(ax)
    ok = df[df[y].notna()]
    groups = ok.groupby(hue, sort=False) if hue else [(None, ok)]
    for value, g in groups:
        g = g.sort_values(x)
        ax.plot(g[x], g[y], marker="o", label=f"{hue}={value}" if hue else y)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if hue:
        ax.legend()
    return ax
