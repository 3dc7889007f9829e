"""rentix on PySpark in local mode: a store fixed by grade in Spark tasks gives the
fixings of `rentix index`. Skipped when pyspark (or Java) is not installed; CI
installs both.

    python3 -m unittest discover -s python/tests -v
"""

import shutil
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

    def test_a_methodology_with_composites_is_refused_unless_grades_only(self):
        with self.assertRaises(rentix.RentixError) as e:
            rentix.spark.fix_group("default")
        self.assertIn("composites", str(e.exception))
        rentix.spark.fix_group("default", grades_only=True)


if __name__ == "__main__":
    unittest.main()
