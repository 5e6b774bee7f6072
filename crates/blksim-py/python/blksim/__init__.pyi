import os
from typing import Any, List, Mapping, Optional, Sequence, Union

import pandas as pd

from ._blksim import BadInput as BadInput
from ._blksim import BlksimError as BlksimError
from ._blksim import InternalError as InternalError
from ._blksim import NotModelled as NotModelled
from ._job import job_text as job_text

__version__: str

JobLike = Union[str, os.PathLike[str], Mapping[str, Any]]

class Result:
    json: str
    warnings: List[str]
    @property
    def has_histogram(self) -> bool: ...
    def report(self) -> str: ...
    @property
    def histogram(self) -> pd.DataFrame: ...
    def plot_latency(self, latency: str = "clat", ax: Any = None) -> Any: ...
    def plot_cpu(self, ax: Any = None) -> Any: ...
    @property
    def data(self) -> dict: ...
    @property
    def jobs(self) -> pd.DataFrame: ...
    @property
    def percentiles(self) -> pd.DataFrame: ...
    @property
    def cpus(self) -> pd.DataFrame: ...
    @property
    def cpu_stages(self) -> pd.DataFrame: ...
    @property
    def interrupts(self) -> pd.DataFrame: ...
    @property
    def disks(self) -> pd.DataFrame: ...
    @property
    def locks(self) -> pd.DataFrame: ...
    @property
    def interrupt_path(self) -> pd.DataFrame: ...

def run(
    job: JobLike,
    machine: Optional[str] = None,
    cmdline: Union[None, str, Sequence[str]] = None,
    sets: Union[None, Mapping[str, Any], Sequence[str]] = None,
    patches: Union[None, str, Sequence[str]] = None,
    at: Union[None, str, Sequence[str]] = None,
    seed: int = 1,
    histogram: bool = False,
) -> Result: ...
def machines() -> str: ...
def machine(name: str) -> dict: ...
def options() -> pd.DataFrame: ...
def sweep(
    spec: Union[str, os.PathLike[str], Mapping[str, Any]],
    backend: str = "local",
    output: Union[None, str, os.PathLike[str]] = None,
    workers: Optional[int] = None,
    quiet: bool = False,
) -> pd.DataFrame: ...
def sweep_plot(df: pd.DataFrame, x: str, y: str, hue: Optional[str] = None, ax: Any = None) -> Any: ...
class TIoUringResult:
    text: str
    iops: float
    warnings: List[str]

def t_io_uring(
    args: Union[str, Sequence[str]],
    machine: Optional[str] = None,
    cmdline: Union[None, str, Sequence[str]] = None,
    sets: Union[None, Mapping[str, Any], Sequence[str]] = None,
    patches: Union[None, str, Sequence[str]] = None,
    seed: int = 1,
) -> TIoUringResult: ...
def reproduce(
    names: Union[None, str, Sequence[str]] = None,
    dir: Union[None, str, os.PathLike[str]] = None,
    seed: Optional[int] = None,
    threads: int = 0,
) -> pd.DataFrame: ...
