"""Baseline for `rentix ingest`: polars doing only the storage half of the job.

Reads a canonical observations CSV (every column as text, like `read_csv` in the
benchmark), takes the fixing date as the UTC calendar date of `observed_at`, and
writes one Snappy Parquet file per month under OUT/observations/month=YYYY-MM/,
rows sorted by that date, the store's layout. No validation, normalization, FX,
dedupe or quarantine: the floor that a month-partitioned store costs with polars'
own writer.

    python3 benches/polars_partitioned_write.py observations.csv OUT
"""
import os
import sys

import polars as pl


def main(src: str, out: str) -> None:
    df = pl.read_csv(src, infer_schema_length=0)
    df = df.with_columns(
        pl.col("observed_at").str.slice(0, 10).alias("fixing_date"),
        pl.col("observed_at").str.slice(0, 7).alias("month"),
    ).sort("fixing_date")
    n = 0
    for (month,), part in df.partition_by("month", as_dict=True).items():
        d = os.path.join(out, "observations", f"month={month}")
        os.makedirs(d, exist_ok=True)
        part.drop("month").write_parquet(os.path.join(d, "run-000001.parquet"))
        n += 1
    print(df.height, "rows,", n, "partitions")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
