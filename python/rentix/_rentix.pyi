"""Type stubs of the Rust extension (python/src/lib.rs)."""

from typing import List, Optional, Tuple

class RentixError(ValueError):
    """A failure of rentix, with the CLI's message (file, row, field)."""

class UsageError(RentixError):
    """An argument, methodology, contract or mapping that cannot be run (exit 2)."""

class InputError(RentixError):
    """A file, row or store that cannot be used (exit 3)."""

class IoError(RentixError):
    """A file that does not exist, could not be read or written (exit 4)."""

def read_files(
    files: List[str],
    observations_out: str,
    quarantine_out: str,
    mapping: Optional[str] = None,
    ratings: List[str] = ...,
) -> str: ...
def fix_files(
    files: List[str],
    methodology: str,
    out: str,
    mapping: Optional[str] = None,
    grades: List[str] = ...,
    from_: Optional[str] = None,
    to: Optional[str] = None,
    ratings: List[str] = ...,
) -> int: ...
def fix_store(
    store: str,
    methodology: str,
    out: str,
    grades: List[str] = ...,
    from_: Optional[str] = None,
    to: Optional[str] = None,
) -> int: ...
def ingest(store: str, files: List[str], mapping: Optional[str] = None, ratings: List[str] = ...) -> str: ...
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
    keep_from: Optional[str] = None,
    keep_to: Optional[str] = None,
) -> int: ...
def observation_days(methodology: str, from_: str, to: str) -> Tuple[str, str]: ...
def lab_candidates(candidates: List[str]) -> List[Tuple[str, str]]: ...
def lab_check(attack_price_pct: float = 10.0, from_: Optional[str] = None, to: Optional[str] = None) -> None: ...
def lab_evaluate(
    observations: str,
    candidate: str,
    truth: Optional[str] = None,
    rent_dir: Optional[str] = None,
    attack_price_pct: float = 10.0,
    from_: Optional[str] = None,
    to: Optional[str] = None,
) -> str: ...
def lab_write(
    out: str,
    evaluations: List[str],
    store: str,
    truth: Optional[str] = None,
    rent_dir: Optional[str] = None,
    attack_price_pct: float = 10.0,
    from_: Optional[str] = None,
    to: Optional[str] = None,
) -> None: ...
def composite_members(methodology: str, grade: str) -> List[str]: ...
def fixing_end(store: str, methodology: str) -> Optional[str]: ...
def has_composites(methodology: str) -> bool: ...
def simulate(
    out: str,
    params: Optional[str] = None,
    seed: Optional[int] = None,
    start: Optional[str] = None,
    days: Optional[int] = None,
    rows: Optional[int] = None,
    cadence: Optional[str] = None,
) -> str: ...
def report(inputs: List[str], out: str, truth: Optional[str] = None) -> None: ...
def contract(
    store: str,
    candidates: List[str],
    out: str,
    truth: Optional[str] = None,
    rent_dir: Optional[str] = None,
    attack_price_pct: float = 10.0,
    from_: Optional[str] = None,
    to: Optional[str] = None,
) -> None: ...
def verify(
    store: str, fixings: str, methodology: Optional[str] = None
) -> Tuple[int, str, List[Tuple[str, str, str, str, str, str]]]: ...
