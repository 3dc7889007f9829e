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
from typing import Any, Callable, List, Optional, Union

from . import RentixError, _methodology, _rentix

# The columns of a fixings file, as the engine writes them (docs/formats.md).
FIXINGS_SCHEMA = (
    "date string, grade string, value double, method string, level long, n_obs long, "
    "n_trades long, n_firm long, n_listings long, n_contributors long, "
    "volume_gpu_hours double, p25 double, p75 double, max_contributor_share double, "
    "sufficient boolean, flags string, methodology_version string, input_sha256 string, "
    "p1 double, p99 double, publication long, change_1d double, change_7d double, "
    "change_30d double, contributor_hhi double"
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
        raise RentixError(
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

        composite = None
        if "_composite" in table.column_names and table.num_rows:
            composite = table.column("_composite")[0].as_py()
        keep = [c for c in table.column_names if not c.startswith("_")]
        with tempfile.TemporaryDirectory(prefix="rentix-spark-") as d:
            src, out = str(Path(d) / "obs.parquet"), str(Path(d) / "fixings.parquet")
            pq.write_table(table.select(keep), src)
            _rentix.fix_observations(src, spec, out, grades_only, through, composite)
            return _plain_strings(pq.read_table(out))

    return fix


def fix(observations: Any, methodology: Any = "default", *, through: Optional[str] = None) -> Any:
    """The whole methodology on Spark: each grade's rows from a task holding that base
    grade's observations, and each composite's rows from a task holding its members'
    observations (a hedonic index over every on-demand grade is one task). Returns a
    Spark DataFrame of :data:`FIXINGS_SCHEMA`; sorted by date and grade it is
    ``rentix index`` (tested with the default methodology).

    >>> obs = spark.read.parquet(*rentix.spark.partitions("store"))
    >>> rentix.spark.fix(obs, "default", through=rentix.spark.fixing_end("store"))
    """
    from pyspark.sql import functions as F

    spec = _methodology(methodology)
    keyed = observations.withColumn("_base_grade", F.split(observations["grade"], "@").getItem(0))
    grades = keyed.groupBy("_base_grade").applyInArrow(_task(spec, True, through), FIXINGS_SCHEMA)
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
