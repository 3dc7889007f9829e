"""rentix on PySpark in local mode: a store fixed by grade in Spark tasks gives the
fixings of `rentix index`. Skipped when pyspark (or Java) is not installed; CI
installs both.

    python3 -m unittest discover -s python/tests -v
"""

import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

import polars as pl

import rentix
from test_rentix import run

try:
    import pyspark  # noqa: F401
    from pyspark.sql import SparkSession

    import rentix.spark
except ImportError:  # pragma: no cover - CI installs pyspark
    SparkSession = None


@unittest.skipIf(SparkSession is None or shutil.which("java") is None, "pyspark or java missing")
class Spark(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="rentix-spark-")
        cls.dir = Path(cls.tmp.name)
        run("simulate", "--out", str(cls.dir / "sim"), "--seed", "4", "--start", "2025-01-01", "--days", "75")
        cls.store = cls.dir / "store"
        run("ingest", "--store", str(cls.store), str(cls.dir / "sim" / "observations.csv"))
        # The workers run the interpreter that runs the tests (the one rentix is
        # installed in), not whatever `python3` is first on PATH: on a machine where
        # that one lacks rentix every task failed to import it. (Local mode reads the
        # variable; `spark.pyspark.python` alone did not reach the workers.)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        cls.spark = (
            SparkSession.builder.master("local[2]")
            .appName("rentix-test")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )

    @classmethod
    def tearDownClass(cls):
        cls.spark.stop()
        cls.tmp.cleanup()

    def test_fixing_by_grade_in_spark_tasks_equals_rentix_index(self):
        obs = self.spark.read.parquet(*rentix.spark.partitions(self.store))
        for methodology in ["listings_7d_sigma", "settlement_business_days", "trades_business_days_rolled"]:
            with self.subTest(methodology=methodology):
                out = self.dir / f"{methodology}.parquet"
                run("index", "--store", str(self.store), "--out", str(out), "--methodology", methodology)
                want = pl.read_parquet(out)
                end = rentix.spark.fixing_end(self.store, methodology)
                fixed = obs.groupBy(rentix.spark.base_grade(obs)).applyInArrow(
                    rentix.spark.fix_group(methodology, through=end), rentix.spark.FIXINGS_SCHEMA
                )
                got = pl.from_arrow(fixed.toArrow()).sort("date", "grade")
                self.assertEqual(got.height, want.height)
                self.assertTrue(got.equals(want), f"{methodology}: Spark and rentix index differ")

    def test_the_whole_default_methodology_with_its_composites_equals_rentix_index(self):
        obs = self.spark.read.parquet(*rentix.spark.partitions(self.store))
        out = self.dir / "default.parquet"
        run("index", "--store", str(self.store), "--out", str(out))
        want = pl.read_parquet(out)
        self.assertTrue(want["method"].is_in(["jevons-chained", "hedonic-time-dummy"]).any())
        fixed = rentix.spark.fix(obs, "default", through=rentix.spark.fixing_end(self.store))
        got = pl.from_arrow(fixed.toArrow()).sort("date", "grade")
        self.assertEqual(got.height, want.height)
        self.assertTrue(got.equals(want), "Spark and rentix index differ on the default methodology")

    def test_a_history_split_into_date_ranges_equals_rentix_index(self):
        # 75 days in ranges of 20: each task holds only the observations its rows
        # depend on (the engine's look-back), and the rows join up to one run's,
        # change columns included. The default methodology's composites stay whole.
        obs = self.spark.read.parquet(*rentix.spark.partitions(self.store))
        for methodology in ["listings_7d_sigma", "settlement_business_days", "default"]:
            with self.subTest(methodology=methodology):
                out = self.dir / f"split-{methodology}.parquet"
                run("index", "--store", str(self.store), "--out", str(out), "--methodology", methodology)
                want = pl.read_parquet(out)
                end = rentix.spark.fixing_end(self.store, methodology)
                fixed = rentix.spark.fix(obs, methodology, through=end, split_days=20)
                got = pl.from_arrow(fixed.toArrow()).sort("date", "grade")
                self.assertEqual(got.height, want.height)
                self.assertTrue(got.equals(want), f"{methodology}: ranges and rentix index differ")

    def test_each_range_task_reads_only_its_look_back(self):
        # listings_7d_sigma: lag 0, carry 3, a 7-day window. Rows from 2025-03-01 are
        # exact from 30 days before (their change_30d): 2025-01-30. A grade lives
        # there through an observation at most 92 + 0 + 3 days before (2024-10-27),
        # less 3 days of clock skew: 2024-10-24 (the window, 7 + 3 days, is shorter).
        # Rows through 2025-03-20 see later observations only through a grade's
        # life: 2025-03-20 + 92 + 0 + 3 + 3 = 2025-06-26.
        days = rentix._rentix.observation_days(rentix._methodology("listings_7d_sigma"), "2025-03-01", "2025-03-20")
        self.assertEqual(days, ("2024-10-24", "2025-06-26"))
        with self.assertRaises(rentix.RentixError):
            rentix.spark.fix(
                self.spark.read.parquet(*rentix.spark.partitions(self.store)), "listings_7d_sigma", split_days=20
            )

    def test_the_contract_lab_in_spark_tasks_equals_rentix_contract(self):
        candidates = [
            "monthly=settlement_business_days:h100-sxm-80gb-bare-metal-on-demand",
            "final=default:h100-sxm-80gb-bare-metal-on-demand-final",
            "b200=listings_7d_sigma:nymex-gpu2-b200",
        ]
        cli_out = self.dir / "lab-cli"
        args = ["contract", "--store", str(self.store), "--out", str(cli_out)]
        for c in candidates:
            args += ["--candidate", c]
        args += ["--truth", str(self.dir / "sim" / "truth.csv")]
        run(*args)
        obs = self.spark.read.parquet(*rentix.spark.partitions(self.store))
        spark_out = self.dir / "lab-spark"
        table = rentix.spark.contract_lab(
            obs, candidates, spark_out, store=str(self.store), truth=self.dir / "sim" / "truth.csv"
        )
        self.assertEqual(table["candidate"].to_list(), ["monthly", "final", "b200"])
        for f in ["comparison.csv", "by_month.csv", "comparison.json"]:
            with self.subTest(file=f):
                self.assertEqual((spark_out / f).read_bytes(), (cli_out / f).read_bytes(), f)

    def test_a_methodology_with_composites_is_refused_unless_grades_only(self):
        with self.assertRaises(rentix.RentixError) as e:
            rentix.spark.fix_group("default")
        self.assertIn("composites", str(e.exception))
        rentix.spark.fix_group("default", grades_only=True)


if __name__ == "__main__":
    unittest.main()
