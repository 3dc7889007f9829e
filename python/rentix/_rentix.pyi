"""Type stubs of the Rust extension (python/src/lib.rs)."""

from typing import List, Optional

class RentixError(ValueError):
    """An input rentix refused, with the CLI's message (file, row, field)."""

def read_files(
    files: List[str],
    observations_out: str,
    quarantine_out: str,
    mapping: Optional[str] = None,
) -> str: ...
def fix_files(
    files: List[str],
    methodology: str,
    out: str,
    mapping: Optional[str] = None,
    grades: List[str] = ...,
    from_: Optional[str] = None,
    to: Optional[str] = None,
) -> int: ...
def fix_store(
    store: str,
    methodology: str,
    out: str,
    grades: List[str] = ...,
    from_: Optional[str] = None,
    to: Optional[str] = None,
) -> int: ...
def ingest(store: str, files: List[str], mapping: Optional[str] = None) -> str: ...
def partitions(store: str) -> List[str]: ...
def version() -> str: ...
def backtest(
    index: str,
    rent: str,
    out: str,
    events: Optional[str] = None,
    contract: Optional[str] = None,
    underlying: Optional[str] = None,
    side: Optional[str] = None,
    period_end: str = "exclusive",
    strategies: List[str] = ...,
    resamples: int = 1000,
    seed: int = 20240101,
    as_restated: bool = False,
    perp: Optional[str] = None,
    perp_premium: Optional[float] = None,
) -> str: ...
def track(
    index: str,
    rent: str,
    out: str,
    events: Optional[str] = None,
    contract: Optional[str] = None,
    side: Optional[str] = None,
    period_end: str = "exclusive",
    min_periods: int = 6,
    min_sufficient_share: float = 0.5,
    resamples: int = 1000,
    seed: int = 20240101,
) -> int: ...
def fix_observations(
    observations: str,
    methodology: str,
    out: str,
    grades_only: bool = False,
    through: Optional[str] = None,
    composite: Optional[str] = None,
) -> int: ...
def composite_members(methodology: str, grade: str) -> List[str]: ...
def fixing_end(store: str, methodology: str) -> Optional[str]: ...
def has_composites(methodology: str) -> bool: ...
