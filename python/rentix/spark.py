"""rentix on Spark: fix a store too large for one machine with the engine inside the
tasks.

Grades are independent: a grade's fixings depend only on its own observations (its
window, carry, listing spread and life). A job therefore splits the observations by
base grade (the grade without its ``@region``: regional and tier-floor grades pool
observations of their base grade) and fixes each group with the engine:

    from pyspark.sql import SparkSession, functions as F
    import rentix.spark

    spark = SparkSession.builder.master("local[2]").getOrCreate()
    obs = spark.read.parquet(*rentix.spark.partitions("store"))
    end = rentix.spark.fixing_end("store", "listings_7d_sigma")
    fixings = (obs.groupBy(rentix.spark.base_grade(obs))
               .applyInArrow(rentix.spark.fix_group("listings_7d_sigma", through=end),
                             rentix.spark.FIXINGS_SCHEMA))

The rows are those of ``rentix index`` on the same store (tested in local mode).
Composites span grades: :func:`fix_group` refuses a methodology with composites
unless ``grades_only=True``; :func:`fix` runs the whole methodology, each composite
in a task of its members' observations. Each task needs the rentix wheel installed on its executor and
memory for its group's observations (about 1 KB per observation, see
docs/scaling.md).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from datetime import date as _date, timedelta
from typing import Any, Callable, List, Optional, Tuple, Union

from . import InputError, UsageError, _methodology, _rentix

# The columns of a fixings file, as the engine writes them (docs/formats.md).
FIXINGS_SCHEMA = (
    "date date, grade string, value double, method string, level long, n_obs long, "
    "n_trades long, n_firm long, n_listings long, n_contributors long, "
    "volume_gpu_hours double, p25 double, p75 double, max_contributor_share double, "
    "sufficient boolean, flags string, methodology_version string, input_sha256 string, "
    "p1 double, p99 double, publication long, change_1d double, change_7d double, "
    "change_30d double, contributor_hhi double, unit string"
)


def partitions(store: Union[str, os.PathLike]) -> List[str]:
    """The committed partition files of a store (what ``spark.read.parquet`` should
    read: never a partial run's or a compaction's leftovers)."""
    root = Path(os.fspath(store))
    return [str(root / p) for p in _rentix.partitions(str(root))]


def fixing_end(store: Union[str, os.PathLike], methodology: Any = "default") -> Optional[str]:
    """The last fixing date of ``rentix index`` on the store: pass it as
    ``fix_group(..., through=...)`` so that every group ends where one run would (a
    grade seen last a few days before the store's end is carried to it)."""
    return _rentix.fixing_end(os.fspath(store), _methodology(methodology))


def base_grade(observations: Any) -> Any:
    """The column to group observations by: the grade without its ``@region``."""
    from pyspark.sql import functions as F

    return F.split(observations["grade"], "@").getItem(0).alias("base_grade")


def _plain_strings(table: Any) -> Any:
    """The engine writes text as Arrow string views; Spark's schema wants strings."""
    import pyarrow as pa

    fields = [
        pa.field(f.name, pa.string()) if str(f.type) in ("string_view", "large_string") else f
        for f in table.schema
    ]
    return table.cast(pa.schema(fields))


def fix_group(
    methodology: Any = "default",
    *,
    through: Optional[str] = None,
    grades_only: bool = False,
) -> Callable[[Any], Any]:
    """A function for ``groupBy(...).applyInArrow``: fixes one group of observations
    (a pyarrow Table in the store's columns) under ``methodology`` through
    ``through`` (:func:`fixing_end`; without it a group ends on its own last day) and
    returns its fixings (a pyarrow Table of :data:`FIXINGS_SCHEMA`)."""
    spec = _methodology(methodology)
    if _rentix.has_composites(spec) and not grades_only:
        raise UsageError(
            "the methodology has composites, which span grades and cannot be fixed by a "
            "task of one grade: pass grades_only=True for the grade rows alone, or fix "
            "composites with `rentix index` on one machine"
        )

    return _task(spec, grades_only, through)


def _task(spec: str, grades_only: bool, through: Optional[str]) -> Callable[[Any], Any]:
    """The function a Spark task runs on its group (a pyarrow Table): the engine on
    the group's observations; a group keyed by ``_composite`` gets that composite's
    rows alone."""

    def fix(table: Any) -> Any:
        import pyarrow.parquet as pq

        composite = keep_from = keep_to = None
        if "_composite" in table.column_names and table.num_rows:
            composite = table.column("_composite")[0].as_py()
        if "_r1" in table.column_names and table.num_rows:
            keep_from = str(table.column("_r1")[0].as_py())
            keep_to = str(table.column("_r2")[0].as_py())
        keep = [c for c in table.column_names if not c.startswith("_")]
        with tempfile.TemporaryDirectory(prefix="rentix-spark-") as d:
            src, out = str(Path(d) / "obs.parquet"), str(Path(d) / "fixings.parquet")
            pq.write_table(table.select(keep), src)
            _rentix.fix_observations(src, spec, out, grades_only, through, composite, keep_from, keep_to)
            return _plain_strings(pq.read_table(out))

    return fix


def date_ranges(start: str, through: str, days: int) -> List[Tuple[str, str]]:
    """Consecutive ranges of ``days`` calendar days from ``start`` to ``through``
    (the last one shorter), as ``(first, last)`` ISO dates."""
    if days < 1:
        raise UsageError(f"split_days must be at least 1, not {days}")
    d, end, out = _date.fromisoformat(start), _date.fromisoformat(through), []
    while d <= end:
        last = min(d + timedelta(days=days - 1), end)
        out.append((d.isoformat(), last.isoformat()))
        d = last + timedelta(days=1)
    return out


def _ranges(observations: Any, spec: str, through: Optional[str], days: int) -> Any:
    """A Spark DataFrame of date ranges (``_range, _r1, _r2``) with the observation
    days each depends on (``_first, _last``, from the engine's look-back)."""
    from pyspark.sql import functions as F

    if through is None:
        raise UsageError(
            "split_days needs through= (rentix.spark.fixing_end(store, methodology)): "
            "every range must know where the run ends"
        )
    start = observations.agg(F.min("fixing_date")).first()[0]
    if start is None:
        raise InputError("the observations are empty")
    # A methodology's own cut-off can put an observation a few days before the
    # store's fixing date: the first range starts a week earlier.
    first = (start - timedelta(days=7)).isoformat()
    rows = []
    for i, (r1, r2) in enumerate(date_ranges(first, through, days)):
        lo, hi = _rentix.observation_days(spec, r1, r2)
        rows.append((i, *(_date.fromisoformat(d) for d in (r1, r2, lo, hi))))
    return observations.sparkSession.createDataFrame(
        rows, "_range long, _r1 date, _r2 date, _first date, _last date"
    )


def fix(
    observations: Any,
    methodology: Any = "default",
    *,
    through: Optional[str] = None,
    split_days: Optional[int] = None,
) -> Any:
    """The whole methodology on Spark: each grade's rows from a task holding that base
    grade's observations, and each composite's rows from a task holding its members'
    observations (a hedonic index over every on-demand grade is one task). Returns a
    Spark DataFrame of :data:`FIXINGS_SCHEMA`; sorted by date and grade it is
    ``rentix index`` (tested).

    With ``split_days`` a grade's history is split further into ranges of that many
    days, each a task holding the observations its rows depend on (the range
    extended backwards by the methodology's look-back: window, carry, listing
    spread, 30-day changes, a grade's life; and forwards by a grade's life): a long
    history no longer needs one task's memory. Composites chain over their whole
    history and stay one task each. ``through`` is then required.

    >>> obs = spark.read.parquet(*rentix.spark.partitions("store"))
    >>> rentix.spark.fix(obs, "default", through=rentix.spark.fixing_end("store"))
    """
    from pyspark.sql import functions as F

    spec = _methodology(methodology)
    keyed = observations.withColumn("_base_grade", F.split(observations["grade"], "@").getItem(0))
    if split_days is None:
        grades = keyed.groupBy("_base_grade").applyInArrow(_task(spec, True, through), FIXINGS_SCHEMA)
    else:
        ranges = _ranges(observations, spec, through, split_days)
        in_range = (keyed["fixing_date"] >= ranges["_first"]) & (keyed["fixing_date"] <= ranges["_last"])
        grades = (
            keyed.join(F.broadcast(ranges), in_range)
            .groupBy("_base_grade", "_range")
            .applyInArrow(_task(spec, True, through), FIXINGS_SCHEMA)
        )
    if not _rentix.has_composites(spec):
        return grades
    bases = [r[0] for r in keyed.select("_base_grade").distinct().collect()]
    pairs = [(b, c) for b in bases for c in _rentix.composite_members(spec, b)]
    if not pairs:
        return grades
    members = observations.sparkSession.createDataFrame(pairs, "_base_grade string, _composite string")
    composites = (
        keyed.join(members, "_base_grade")
        .groupBy("_composite")
        .applyInArrow(_task(spec, False, through), FIXINGS_SCHEMA)
    )
    return grades.unionByName(composites)


def contract_lab(
    observations: Any,
    candidates: List[str],
    out: Union[str, os.PathLike],
    *,
    store: Optional[Union[str, os.PathLike]] = None,
    truth: Optional[Union[str, os.PathLike]] = None,
    rent_dir: Optional[Union[str, os.PathLike]] = None,
    attack_price_pct: float = 10.0,
    from_: Optional[str] = None,
    to: Optional[str] = None,
) -> Any:
    """The contract lab (``rentix contract``) with each candidate evaluated in a Spark
    task holding its underlying's observations (its base grade's); the task searches
    the candidate's months in parallel on its executor's cores. Writes to ``out``
    what ``rentix contract --out`` writes (comparison.csv, by_month.csv,
    comparison.json, the charts; tested equal) and returns comparison.csv as a
    polars DataFrame.

    ``candidates`` are ``--candidate`` texts (``[NAME=]METHODOLOGY:CONTRACT``, shipped
    names or paths); ``truth`` and ``rent_dir`` must be readable by the executors
    (a shared file system); ``store`` is the label comparison.json gives the store.

    >>> obs = spark.read.parquet(*rentix.spark.partitions("store"))
    >>> rentix.spark.contract_lab(obs, ["settlement_business_days:nymex-gpu1-h100"], "lab",
    ...                           store="store")
    """
    import polars as pl
    from pyspark.sql import functions as F

    if isinstance(candidates, str):
        candidates = [candidates]
    parsed = _rentix.lab_candidates(list(candidates))
    truth_p = None if truth is None else os.fspath(truth)
    rent_p = None if rent_dir is None else os.fspath(rent_dir)
    # Refuse bad settings on the driver, before any task starts.
    _rentix.lab_check(attack_price_pct, from_, to)
    texts = dict(zip((name for name, _ in parsed), candidates))
    pairs = [(name, base) for name, base in parsed]
    keyed = observations.withColumn("_base_grade", F.split(observations["grade"], "@").getItem(0))
    wanted = observations.sparkSession.createDataFrame(pairs, "_candidate string, _base_grade string")

    def evaluate(table: Any) -> Any:
        import pyarrow as pa
        import pyarrow.parquet as pq

        name = table.column("_candidate")[0].as_py()
        keep = [c for c in table.column_names if not c.startswith("_")]
        with tempfile.TemporaryDirectory(prefix="rentix-spark-") as d:
            src = str(Path(d) / "obs.parquet")
            pq.write_table(table.select(keep), src)
            e = _rentix.lab_evaluate(src, texts[name], truth_p, rent_p, attack_price_pct, from_, to)
        return pa.table({"candidate": [name], "evaluation": [e]})

    done = {
        r["candidate"]: r["evaluation"]
        for r in keyed.join(F.broadcast(wanted), "_base_grade")
        .groupBy("_candidate")
        .applyInArrow(evaluate, "candidate string, evaluation string")
        .collect()
    }
    # A candidate whose grade the store never saw gets the row `rentix contract`
    # gives it: evaluated on no observations.
    missing = [name for name, _ in parsed if name not in done]
    if missing:
        with tempfile.TemporaryDirectory(prefix="rentix-spark-") as d:
            empty = str(Path(d) / "obs.parquet")
            _empty_observations(observations, empty)
            for name in missing:
                done[name] = _rentix.lab_evaluate(empty, texts[name], truth_p, rent_p, attack_price_pct, from_, to)
    label = os.fspath(store) if store is not None else "<spark>"
    _rentix.lab_write(
        os.fspath(out),
        [done[name] for name, _ in parsed],
        label,
        truth_p,
        rent_p,
        attack_price_pct,
        from_,
        to,
    )
    return pl.read_csv(Path(os.fspath(out)) / "comparison.csv")


def _empty_observations(observations: Any, path: str) -> None:
    """An empty Parquet file with the observations' columns."""
    import pyarrow.parquet as pq

    pq.write_table(observations.limit(0).toArrow(), path)
