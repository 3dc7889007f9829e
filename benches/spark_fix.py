"""The Spark job of docs/scaling.md on one store, for benches/python.sh:

    python3 benches/spark_fix.py STORE METHODOLOGY OUT.parquet
"""
import sys

import polars as pl
from pyspark.sql import SparkSession

import rentix.spark

store, methodology, out = sys.argv[1:4]
spark = (
    SparkSession.builder.master("local[2]")
    .config("spark.sql.session.timeZone", "UTC")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
obs = spark.read.parquet(*rentix.spark.partitions(store))
end = rentix.spark.fixing_end(store, methodology)
fixed = obs.groupBy(rentix.spark.base_grade(obs)).applyInArrow(
    rentix.spark.fix_group(methodology, through=end), rentix.spark.FIXINGS_SCHEMA
)
pl.from_arrow(fixed.toArrow()).sort("date", "grade").write_parquet(out)
spark.stop()
