"""The example notebook (examples/blksim-python.ipynb) runs end to end: its
code cells executed in order in one namespace, as a kernel would, in a
scratch copy of examples/ (it writes a job file there), with matplotlib
drawing off screen. Each plot call must have drawn something."""

import json
import os
import shutil
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_the_example_notebook_runs(tmp_path, monkeypatch):
    for f in EXAMPLES.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    monkeypatch.chdir(tmp_path)
    # Its sweep of a spec given as a dict writes into a temporary directory: this test's.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    nb = json.loads((tmp_path / "blksim-python.ipynb").read_text())
    ns = {}
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(code) >= 5
    for i, cell in enumerate(code):
        exec(compile("".join(cell["source"]), f"<cell {i}>", "exec"), ns)
    assert len(ns["r"].jobs) == 1 and ns["r"].jobs.loc[0, "iops"] > 0
    assert len(ns["df"]) == 8 and ns["df"]["error"].isna().all()
    figures = [plt.figure(n) for n in plt.get_fignums()]
    assert len(figures) == 3
    for fig in figures:
        assert fig.axes[0].has_data(), "a plot drew nothing"
    plt.close("all")


def test_sweep_plot_names_a_missing_column():
    import pandas as pd
    import pytest

    import blksim

    with pytest.raises(KeyError, match="iodepth"):
        blksim.sweep_plot(pd.DataFrame({"iops": [1.0]}), x="iodepth", y="iops")
