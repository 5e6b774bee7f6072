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
    def report(self) -> str: ...
    @property
    def data(self) -> dict: ...
    @property
    def jobs(self) -> pd.DataFrame: ...
    @property
    def percentiles(self) -> pd.DataFrame: ...
    @property
    def cpus(self) -> pd.DataFrame: ...
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
) -> Result: ...
def machines() -> str: ...
def machine(name: str) -> dict: ...
def options() -> pd.DataFrame: ...
