"""Type stubs of the rentix package."""

import os
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Tuple, Union

import polars as pl

from ._rentix import InputError as InputError
from ._rentix import IoError as IoError
from ._rentix import RentixError as RentixError
from ._rentix import UsageError as UsageError

Observations = Union[str, os.PathLike[str], Iterable[Union[str, os.PathLike[str]]], pl.DataFrame]
Methodology = Union[str, os.PathLike[str], Dict[str, Any]]
PathLike = Union[str, os.PathLike[str]]

def version() -> str: ...
def normalize(
    observations: Observations,
    mapping: Optional[PathLike] = None,
    *,
    ratings: Union[PathLike, Iterable[PathLike]] = (),
) -> Tuple[pl.DataFrame, pl.DataFrame]: ...
def fix(
    observations: Observations,
    methodology: Methodology = "default",
    *,
    mapping: Optional[PathLike] = None,
    grades: Iterable[str] = (),
    from_: Optional[str] = None,
    to: Optional[str] = None,
    ratings: Union[PathLike, Iterable[PathLike]] = (),
) -> pl.DataFrame: ...

Table = Union[str, os.PathLike[str], pl.DataFrame]

class Backtest:
    summary: Dict[str, Any]
    periods: pl.DataFrame
    daily: pl.DataFrame
    @property
    def recommendation(self) -> Dict[str, Any]: ...

def backtest(
    fixings: Table,
    rent: Table,
    events: Optional[Table] = None,
    *,
    contract: Optional[PathLike] = None,
    underlying: Optional[str] = None,
    side: Optional[str] = None,
    period_end: str = "exclusive",
    strategies: Iterable[str] = (),
    resamples: int = 1000,
    seed: int = 20240101,
    as_restated: bool = False,
    perp: Optional[PathLike] = None,
    perp_premium: Optional[float] = None,
    out: Optional[PathLike] = None,
) -> Backtest: ...
def track(
    fixings: Table,
    rent: Table,
    events: Optional[Table] = None,
    *,
    contract: Optional[PathLike] = None,
    side: Optional[str] = None,
    period_end: str = "exclusive",
    min_periods: int = 6,
    min_sufficient_share: float = 0.5,
    resamples: int = 1000,
    seed: int = 20240101,
) -> pl.DataFrame: ...

class Store:
    path: str
    def __init__(self, path: PathLike) -> None: ...
    def ingest(
        self,
        files: Iterable[PathLike],
        mapping: Optional[PathLike] = None,
        *,
        ratings: Union[PathLike, Iterable[PathLike]] = (),
    ) -> Dict[str, Any]: ...
    def observations(self) -> pl.LazyFrame: ...
    def index(
        self,
        methodology: Methodology = "default",
        *,
        grades: Iterable[str] = (),
        from_: Optional[str] = None,
        to: Optional[str] = None,
    ) -> pl.DataFrame: ...
def simulate(
    out: PathLike,
    *,
    params: Optional[PathLike] = None,
    seed: Optional[int] = None,
    start: Optional[str] = None,
    days: Optional[int] = None,
    rows: Optional[int] = None,
    cadence: Optional[str] = None,
) -> Dict[str, Any]: ...
def report(
    inputs: Union[PathLike, Iterable[PathLike]],
    out: PathLike,
    *,
    truth: Optional[PathLike] = None,
) -> Path: ...
def contract(
    store: PathLike,
    candidates: Union[str, Iterable[str]],
    out: PathLike,
    *,
    truth: Optional[PathLike] = None,
    rent_dir: Optional[PathLike] = None,
    attack_price_pct: float = 10.0,
    from_: Optional[str] = None,
    to: Optional[str] = None,
) -> pl.DataFrame: ...
def verify(
    store: PathLike,
    fixings: PathLike,
    *,
    methodology: Optional[PathLike] = None,
) -> pl.DataFrame: ...
