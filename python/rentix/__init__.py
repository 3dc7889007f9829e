"""rentix: GPU rental price indices from messy prices, with the engine the CLI uses.

DataFrames in and out are polars (``to_pandas()`` for pandas). Every function calls
the same Rust crates as the ``rentix`` command line, so the fixings are the CLI's to
the byte (tested). Errors raise :class:`RentixError` with the CLI's message, as one
of its subclasses by the class the CLI exits by: :class:`UsageError` (an argument,
methodology, contract or mapping that cannot be run; exit 2), :class:`InputError` (a
file, row or store that cannot be used; exit 3), :class:`IoError` (a file that does
not exist or cannot be read or written; exit 4).

Example::

    import rentix
    obs, quarantine = rentix.normalize("observations.csv")
    fixings = rentix.fix(obs, methodology="default")
    store = rentix.Store("store")
    store.ingest(["observations.csv"])
    fixings = store.index(methodology="settlement_business_days")
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import polars as pl

from . import _rentix
from ._rentix import InputError, IoError, RentixError, UsageError

__all__ = [
    "Backtest",
    "InputError",
    "IoError",
    "RentixError",
    "Store",
    "backtest",
    "contract",
    "fix",
    "normalize",
    "report",
    "simulate",
    "track",
    "UsageError",
    "verify",
    "version",
]

Observations = Union[str, os.PathLike, Iterable[Union[str, os.PathLike]], pl.DataFrame]
Methodology = Union[str, os.PathLike, Dict[str, Any]]


def version() -> str:
    """The version of the rentix engine."""
    return _rentix.version()


def _methodology(m: Methodology) -> str:
    """A methodology as the engine takes it: a path, a shipped name, or a dict."""
    if isinstance(m, dict):
        return json.dumps(m)
    return os.fspath(m)


def _dates(from_: Optional[str], to: Optional[str]) -> Tuple[Optional[str], Optional[str]]:
    return (None if from_ is None else str(from_), None if to is None else str(to))


# The canonical columns a frame of ``normalize()``'s output is written back as: the
# rows it kept, in the layout ``ingest`` reads (the GPU by its catalog id, which
# resolves as itself).
_CANONICAL_FROM_NORMALIZED = (
    "kind", "observed_at", "source", "gpu", "scope", "term", "price", "price_unit", "currency",
    "obs_id", "quantity_gpu_hours", "gpus_per_unit", "region", "interconnect", "cluster_gpus",
    "operator_tier", "upfront", "term_start",
)


def _as_canonical(frame: pl.DataFrame) -> pl.DataFrame:
    """A frame of ``normalize()``'s output (it has ``dedupe_key`` and
    ``fixing_date``) as canonical observations; any other frame as it is."""
    if not {"dedupe_key", "fixing_date", "usd_per_gpu_hour"} <= set(frame.columns):
        return frame
    missing = [c for c in _CANONICAL_FROM_NORMALIZED if c not in frame.columns]
    if missing:
        raise InputError(
            "this frame looks like normalize()'s output but lacks " + ", ".join(missing)
            + ": pass the raw observations (a path or a canonical frame) instead"
        )
    out = frame.select(_CANONICAL_FROM_NORMALIZED)
    if out.schema["observed_at"] != pl.String:
        out = out.with_columns(
            pl.col("observed_at").dt.convert_time_zone("UTC").dt.strftime("%Y-%m-%dT%H:%M:%S%.fZ")
        )
    return out


class _Files:
    """Observation files for the engine: paths as given, or a DataFrame written to a
    temporary CSV in the canonical layout (removed on exit). A frame of
    ``normalize()``'s output is written back as the canonical rows it kept."""

    def __init__(self, observations: Observations):
        self._tmp = None
        if isinstance(observations, pl.DataFrame):
            observations = _as_canonical(observations)
            self._tmp = tempfile.TemporaryDirectory(prefix="rentix-")
            path = Path(self._tmp.name) / "observations.csv"
            observations.write_csv(path)
            self.paths = [str(path)]
        elif isinstance(observations, (str, os.PathLike)):
            self.paths = [os.fspath(observations)]
        else:
            self.paths = [os.fspath(p) for p in observations]
        if not self.paths:
            raise UsageError("no observation files given")

    def __enter__(self) -> List[str]:
        return self.paths

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()


def _read_parquet(path: str) -> pl.DataFrame:
    # Read whole before the temporary directory goes.
    return pl.read_parquet(path, memory_map=False)


def _ratings(ratings: Iterable[Union[str, os.PathLike]]) -> List[str]:
    if isinstance(ratings, (str, os.PathLike)):
        return [os.fspath(ratings)]
    return [os.fspath(r) for r in ratings]


def normalize(
    observations: Observations,
    mapping: Optional[Union[str, os.PathLike]] = None,
    *,
    ratings: Iterable[Union[str, os.PathLike]] = (),
) -> Tuple[pl.DataFrame, pl.DataFrame]:
    """Validates, normalizes (USD per GPU-hour) and deduplicates observations exactly
    as ``rentix ingest`` does, in memory.

    ``observations`` is a path, a list of paths, or a polars DataFrame in the
    canonical layout (``kind, observed_at, source, gpu, scope, term, price,
    price_unit, currency``, ...); ``mapping`` a mapping file (or a shipped mapping's
    name) for a foreign layout; ``ratings`` operator-rating files (``ingest
    --ratings``) for rows without a tier. Returns ``(observations, quarantine)``: the rows
    kept, with the store's columns, and the refused rows with their reason.

    >>> obs, quarantine = rentix.normalize("observations.csv")
    >>> quarantine.group_by("reason").len()
    """
    with _Files(observations) as paths, tempfile.TemporaryDirectory(prefix="rentix-") as d:
        obs, quarantine = str(Path(d) / "obs.parquet"), str(Path(d) / "quarantine.csv")
        _rentix.read_files(
            paths, obs, quarantine, None if mapping is None else os.fspath(mapping), _ratings(ratings)
        )
        return _read_parquet(obs), pl.read_csv(quarantine, infer_schema_length=0)


def fix(
    observations: Observations,
    methodology: Methodology = "default",
    *,
    mapping: Optional[Union[str, os.PathLike]] = None,
    grades: Iterable[str] = (),
    from_: Optional[str] = None,
    to: Optional[str] = None,
    ratings: Iterable[Union[str, os.PathLike]] = (),
) -> pl.DataFrame:
    """Fixes raw observations under a methodology, in memory and with no store: the
    fixings of ``rentix index --input`` (every column, one row per grade or
    composite and date).

    ``methodology`` is a path, a shipped name (``"default"``,
    ``"settlement_business_days"``, ...) or a dict in the methodology file's shape.

    >>> fixings = rentix.fix("observations.csv", "listings_7d_sigma")
    >>> fixings.filter(pl.col("grade") == "h100-sxm-80gb/vm/on-demand")
    """
    f, t = _dates(from_, to)
    with _Files(observations) as paths, tempfile.TemporaryDirectory(prefix="rentix-") as d:
        out = str(Path(d) / "fixings.parquet")
        _rentix.fix_files(
            paths,
            _methodology(methodology),
            out,
            None if mapping is None else os.fspath(mapping),
            list(grades),
            f,
            t,
            _ratings(ratings),
        )
        return _read_parquet(out)


class _Table:
    """A table argument for the engine: a path as given, or a DataFrame written to a
    temporary CSV (removed on exit)."""

    def __init__(self, table: Union[str, os.PathLike, pl.DataFrame, None], name: str):
        self._tmp = None
        if table is None:
            self.path = None
        elif isinstance(table, pl.DataFrame):
            self._tmp = tempfile.TemporaryDirectory(prefix="rentix-")
            self.path = str(Path(self._tmp.name) / f"{name}.csv")
            table.write_csv(self.path)
        else:
            self.path = os.fspath(table)

    def __enter__(self) -> Optional[str]:
        return self.path

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()


class Backtest:
    """A backtest's result: ``summary`` (``summary.json`` as a dict, with the
    ``recommendation`` first a person reads), ``periods`` and ``daily``."""

    def __init__(self, summary: Dict[str, Any], periods: pl.DataFrame, daily: pl.DataFrame):
        self.summary = summary
        self.periods = periods
        self.daily = daily

    @property
    def recommendation(self) -> Dict[str, Any]:
        """Hedge, do not hedge, or not enough data: the decision and its reason."""
        return self.summary["recommendation"]

    def __repr__(self) -> str:
        rec = self.summary.get("recommendation", {})
        return f"rentix.Backtest({rec.get('decision')!r}: {rec.get('reason', '')!r})"


Table = Union[str, os.PathLike, pl.DataFrame]


def backtest(
    fixings: Table,
    rent: Table,
    events: Optional[Table] = None,
    *,
    contract: Optional[Union[str, os.PathLike]] = None,
    underlying: Optional[str] = None,
    side: Optional[str] = None,
    period_end: str = "exclusive",
    strategies: Iterable[str] = (),
    resamples: int = 1000,
    seed: int = 20240101,
    as_restated: bool = False,
    perp: Optional[Union[str, os.PathLike]] = None,
    perp_premium: Optional[float] = None,
    out: Optional[Union[str, os.PathLike]] = None,
) -> Backtest:
    """Backtests a futures hedge of a rent on an index's fixings (``rentix
    backtest``): the same ``summary.json`` numbers as the CLI.

    ``fixings`` is a fixings file (its restatement log beside it makes the backtest
    settle on fixings as first published) or a DataFrame; ``rent`` and ``events``
    files or DataFrames; ``contract`` a contract file or a shipped name
    (``"nymex-gpu1-h100"``); ``underlying`` the grade it settles on; ``side`` ``"pay"``
    or ``"earn"`` for a rent without a ``side`` column. ``perp`` (a perp spec or
    ``"h100-sxm-80gb-bare-metal-perp"``) runs a perpetual swap beside the futures
    (``summary["perp"]``, rows with ``instrument == "perp"``), ``perp_premium`` its
    mark's premium over the index. ``out`` keeps the CLI's files.

    >>> bt = rentix.backtest("fixings.csv", "rent.csv", "events.csv")
    >>> bt.recommendation["decision"], bt.periods.select("hedge_pnl").sum()
    """
    with _Table(fixings, "fixings") as f, _Table(rent, "rent") as r, _Table(
        events, "events"
    ) as e, tempfile.TemporaryDirectory(prefix="rentix-") as d:
        dst = os.fspath(out) if out is not None else d
        summary = _rentix.backtest(
            f,
            r,
            dst,
            e,
            None if contract is None else os.fspath(contract),
            underlying,
            side,
            period_end,
            list(strategies),
            resamples,
            seed,
            as_restated,
            None if perp is None else os.fspath(perp),
            perp_premium,
        )
        periods = pl.read_csv(Path(dst) / "periods.csv")
        daily = pl.read_csv(Path(dst) / "daily.csv")
        return Backtest(json.loads(summary), periods, daily)


def track(
    fixings: Table,
    rent: Table,
    events: Optional[Table] = None,
    *,
    contract: Optional[Union[str, os.PathLike]] = None,
    side: Optional[str] = None,
    period_end: str = "exclusive",
    min_periods: int = 6,
    min_sufficient_share: float = 0.5,
    resamples: int = 1000,
    seed: int = 20240101,
) -> pl.DataFrame:
    """Ranks every grade and composite of a fixings file by how well it tracks (and
    would hedge) a rent (``rentix track``); the unranked rows say why.

    >>> rentix.track("fixings.csv", "rent.csv").filter(pl.col("rank").is_not_null())
    """
    with _Table(fixings, "fixings") as f, _Table(rent, "rent") as r, _Table(
        events, "events"
    ) as e, tempfile.TemporaryDirectory(prefix="rentix-") as d:
        out = str(Path(d) / "track.parquet")
        _rentix.track(
            f,
            r,
            out,
            e,
            None if contract is None else os.fspath(contract),
            side,
            period_end,
            min_periods,
            min_sufficient_share,
            resamples,
            seed,
        )
        return _read_parquet(out)


def simulate(
    out: Union[str, os.PathLike],
    *,
    params: Optional[Union[str, os.PathLike]] = None,
    seed: Optional[int] = None,
    start: Optional[str] = None,
    days: Optional[int] = None,
    rows: Optional[int] = None,
    cadence: Optional[str] = None,
) -> Dict[str, Any]:
    """Writes a simulated market with known truth into ``out`` (``rentix
    simulate``): observations, truth, rents and events of its users; the bundled
    parameters, or the ``params`` file, with the overrides given. Returns the
    manifest (``manifest.json``)."""
    manifest = _rentix.simulate(
        os.fspath(out),
        None if params is None else os.fspath(params),
        seed,
        None if start is None else str(start),
        days,
        rows,
        cadence,
    )
    return json.loads(manifest)


def report(
    inputs: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]],
    out: Union[str, os.PathLike],
    *,
    truth: Optional[Union[str, os.PathLike]] = None,
) -> Path:
    """Renders the human report (``rentix report``: one self-contained HTML file)
    of a fixings file, a backtest or contract lab directory, or a directory holding
    them; several fixings files are compared (against ``truth`` when given).
    Returns the path written."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    _rentix.report(
        [os.fspath(p) for p in inputs],
        os.fspath(out),
        None if truth is None else os.fspath(truth),
    )
    return Path(out)


def contract(
    store: Union[str, os.PathLike],
    candidates: Union[str, Iterable[str]],
    out: Union[str, os.PathLike],
    *,
    truth: Optional[Union[str, os.PathLike]] = None,
    rent_dir: Optional[Union[str, os.PathLike]] = None,
    attack_price_pct: float = 10.0,
    from_: Optional[str] = None,
    to: Optional[str] = None,
) -> pl.DataFrame:
    """The contract design lab (``rentix contract``, the same library run): each
    candidate (``[NAME=]METHODOLOGY:CONTRACT``, shipped names or paths) evaluated
    on the store for sufficiency, manipulation cost, representativeness, hedger
    utility and economics. Writes to ``out`` what ``rentix contract --out`` writes
    (comparison.csv, by_month.csv, comparison.json, the charts) and returns
    comparison.csv as a frame. ``rentix.spark.contract_lab`` spreads the same over
    a cluster.

    >>> rentix.contract("store", ["settlement_business_days:nymex-gpu1-h100"], "lab")
    """
    if isinstance(candidates, str):
        candidates = [candidates]
    f, t = _dates(from_, to)
    _rentix.contract(
        os.fspath(store),
        list(candidates),
        os.fspath(out),
        None if truth is None else os.fspath(truth),
        None if rent_dir is None else os.fspath(rent_dir),
        attack_price_pct,
        f,
        t,
    )
    return pl.read_csv(Path(os.fspath(out)) / "comparison.csv")


def verify(
    store: Union[str, os.PathLike],
    fixings: Union[str, os.PathLike],
    *,
    methodology: Optional[Union[str, os.PathLike]] = None,
) -> pl.DataFrame:
    """Checks a publication as ``rentix verify`` does (the same library call):
    ``fixings`` fixed again from ``store`` under ``methodology`` (a path or a
    shipped name; absent: the shipped one its rows name), every cell of it, its digest and the files beside
    it compared. Returns every difference (``file``, ``date``, ``grade``,
    ``column``, ``published``, ``recomputed``): an empty frame is a publication
    that verifies. A check that cannot be made raises (``IoError``, ``InputError``,
    ``UsageError``) as the CLI exits 4, 3 or 2."""
    _, _, rows = _rentix.verify(
        os.fspath(store),
        os.fspath(fixings),
        None if methodology is None else os.fspath(methodology),
    )
    names = ["file", "date", "grade", "column", "published", "recomputed"]
    return pl.DataFrame(rows, schema={n: pl.Utf8 for n in names}, orient="row")


class Store:
    """A rentix store directory (``rentix ingest`` writes it).

    >>> store = rentix.Store("store")
    >>> store.ingest(["today.csv"])["accepted"]
    >>> store.observations().filter(pl.col("kind") == "trade").collect()
    >>> store.index("default", from_="2025-06-01")
    """

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = os.fspath(path)

    def ingest(
        self,
        files: Iterable[Union[str, os.PathLike]],
        mapping: Optional[Union[str, os.PathLike]] = None,
        *,
        ratings: Iterable[Union[str, os.PathLike]] = (),
    ) -> Dict[str, Any]:
        """Ingests files into the store (``rentix ingest``); returns the run's
        summary (``rows_read``, ``accepted``, ``quarantined``, ``duplicates``, ...)."""
        summary = _rentix.ingest(
            self.path,
            [os.fspath(f) for f in files],
            None if mapping is None else os.fspath(mapping),
            _ratings(ratings),
        )
        return json.loads(summary)

    def observations(self) -> pl.LazyFrame:
        """The committed observations as a lazy polars scan of the store's
        partitions (only files a run committed; compaction leftovers and partial
        runs are never read)."""
        files = [str(Path(self.path) / p) for p in _rentix.partitions(self.path)]
        if not files:
            raise InputError(f"{self.path}: the store holds no observations")
        return pl.scan_parquet(files)

    def index(
        self,
        methodology: Methodology = "default",
        *,
        grades: Iterable[str] = (),
        from_: Optional[str] = None,
        to: Optional[str] = None,
    ) -> pl.DataFrame:
        """Fixes the store over its whole history (``rentix index``) and returns the
        fixings of ``[from_, to]`` (every date by default). An intraday methodology
        (``"intraday_lowest_listing_15m"``) returns a row per grade and stamp, with
        ``fixed_at``."""
        f, t = _dates(from_, to)
        with tempfile.TemporaryDirectory(prefix="rentix-") as d:
            out = str(Path(d) / "fixings.parquet")
            _rentix.fix_store(self.path, _methodology(methodology), out, list(grades), f, t)
            return _read_parquet(out)

    def __repr__(self) -> str:
        return f"rentix.Store({self.path!r})"
