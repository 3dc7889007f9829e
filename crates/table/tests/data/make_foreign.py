"""Makes the Parquet files other tools write, for rentix-table's reader tests.

Run with pyarrow and polars (Python) installed: python make_foreign.py
Each file holds the same five rows; tests/foreign_parquet.rs says what rentix reads.
"""
import datetime as dt

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

UTC = dt.timezone.utc
text = ["H100", None, "A100 80GB, SXM", "H100", ""]
price = [2.5, None, 1.25, -0.0, 3.0]
count = [1, 2, None, 4, 5]
firm = [True, False, None, True, False]
at = [dt.datetime(2025, 6, 1, 12, 30, 15, 123456, tzinfo=UTC), None,
      dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
      dt.datetime(2025, 6, 2, tzinfo=UTC), dt.datetime(2030, 1, 1, tzinfo=UTC)]
day = [dt.date(2025, 6, 1), dt.date(2025, 6, 2), None, dt.date(1970, 1, 1), dt.date(1969, 12, 31)]

# pyarrow's defaults: plain `string`, Snappy, microsecond timestamps.
pq.write_table(pa.table({
    "text": pa.array(text, pa.string()),
    "price": pa.array(price, pa.float64()),
    "count": pa.array(count, pa.int64()),
    "firm": pa.array(firm, pa.bool_()),
    "at": pa.array(at, pa.timestamp("us", tz="UTC")),
    "day": pa.array(day, pa.date32()),
}), "pyarrow.parquet")

# Spark's way: INT96 nanosecond timestamps, gzip, large strings, no Arrow schema.
pq.write_table(pa.table({
    "text": pa.array(text, pa.large_string()),
    "at": pa.array(at, pa.timestamp("ns", tz="UTC")),
}), "int96_gzip.parquet", compression="gzip", use_deprecated_int96_timestamps=True,
    store_schema=False)

# polars' defaults: zstd, string views, millisecond timestamps here; a row group of 2.
pl.DataFrame({
    "text": text,
    "at": pl.Series(at).dt.cast_time_unit("ms"),
    "day": day,
}).write_parquet("polars_zstd.parquet", row_group_size=2)

# A categorical (dictionary) column and a 32-bit integer column.
pq.write_table(pa.table({
    "grade": pa.array(text).dictionary_encode(),
    "small": pa.array(count, pa.int32()),
}), "dictionary_int32.parquet")
