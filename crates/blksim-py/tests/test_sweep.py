"""blksim.sweep against `blksim sweep`: the same rows, typed as the CLI's
Parquet; resumed; a failed point a row; the same table on Ray."""

import subprocess

import pandas as pd
import pytest

import blksim
from test_run import cli

JOB = """[global]
ioengine=libaio
direct=1
rw=randread
bs=4k
number_ios=2000

[a]
filename=/dev/nvme0n1
"""
SPEC = """job = "job.fio"
machine = "spr-gen5"
seed = 3
[axes]
iodepth = [1, 8]
cmdline = ["", "intremap=posted_msi"]
"""


@pytest.fixture
def spec(tmp_path):
    (tmp_path / "job.fio").write_text(JOB)
    p = tmp_path / "s.toml"
    p.write_text(SPEC)
    return p


def cli_table(spec):
    subprocess.run([cli(), "sweep", spec], check=True, capture_output=True)
    return pd.read_parquet(spec.with_suffix(".parquet"))


def test_rows_are_the_commands(spec, tmp_path):
    df = blksim.sweep(spec, output=tmp_path / "out", quiet=True)
    want = cli_table(spec)
    assert list(df.columns) == list(want.columns)
    assert df.attrs["ran"] == 4 and len(df) == 4
    metrics = [c for c in want.columns if c not in ("point", "iodepth", "cmdline", "error", "key")]
    pd.testing.assert_frame_equal(df[["point", "iodepth", "cmdline"] + metrics], want[["point", "iodepth", "cmdline"] + metrics],
                                  check_dtype=False)
    assert str(df["iodepth"].dtype) == "int64" and df["iops"].dtype == "float64"
    # Posted MSIs at QD8 on one drive: the model's answer differs from remappable.
    assert df.loc[3, "iops"] != df.loc[2, "iops"]
    # The dataset reads whole.
    assert len(pd.read_parquet(tmp_path / "out")) == 4


def test_a_rerun_runs_nothing_and_a_changed_point_again(spec, tmp_path):
    out = tmp_path / "out"
    first = blksim.sweep(spec, output=out, quiet=True)
    again = blksim.sweep(spec, output=out, quiet=True)
    assert again.attrs["ran"] == 0
    pd.testing.assert_frame_equal(first, again)
    (tmp_path / "job.fio").write_text(JOB.replace("number_ios=2000", "number_ios=1000"))
    assert blksim.sweep(spec, output=out, quiet=True).attrs["ran"] == 4


def test_a_failed_point_is_a_row_with_its_error(tmp_path):
    (tmp_path / "job.fio").write_text(JOB)
    spec = {"job": str(tmp_path / "job.fio"), "axes": {"iodepth": [4, 0]}}
    df = blksim.sweep(spec, output=tmp_path / "out", quiet=True)
    assert len(df) == 2
    assert pd.isna(df.loc[0, "error"]) or df.loc[0, "error"] == ""
    assert "iodepth" in df.loc[1, "error"] and pd.isna(df.loc[1, "iops"])
    # A failed point runs again on a rerun.
    assert blksim.sweep(spec, output=tmp_path / "out", quiet=True).attrs["ran"] == 1


def test_bad_specs_are_bad_input(tmp_path):
    with pytest.raises(blksim.BadInput, match="no such sweep spec"):
        blksim.sweep(tmp_path / "none.toml")
    with pytest.raises(blksim.BadInput):
        blksim.sweep({"job": "missing.fio", "axes": {"iodepth": [1]}}, output=tmp_path / "o")
    with pytest.raises(ValueError):
        blksim.sweep({"job": "x", "axes": {}}, backend="spark")


def test_ray_gives_the_same_table(spec, tmp_path):
    import ray  # installed by scripts/test-python.sh (requirements-test.txt)

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = blksim.sweep(spec, backend="ray", output=tmp_path / "ray", quiet=True)
    finally:
        ray.shutdown()
    local = blksim.sweep(spec, output=tmp_path / "local", quiet=True)
    pd.testing.assert_frame_equal(on_ray, local)
