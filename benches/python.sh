#!/usr/bin/env bash
# The Python binding and the Spark route against the CLI (issue 30): the same fixing
# of one store by `rentix index`, by `rentix.Store(...).index()` from Python (the
# overhead of the binding: the interpreter, polars, the Parquet hand-over) and by the
# Spark job of docs/scaling.md on local[2] (the overhead of Spark around the engine).
# A measurement, never a test; the three results are checked equal.
#
#   cargo build --release && pip install ./python pyspark pyarrow && bash benches/python.sh [WORKDIR] [ROWS]
set -euo pipefail
cd "$(dirname "$0")/.."
R="${RENTIX:-${CARGO_TARGET_DIR:-target}/release/rentix}"
W="${1:-$(mktemp -d)}"
ROWS="${2:-1000000}"
M=listings_7d_sigma
mkdir -p "$W"
echo "binary: $R   workdir: $W   rows: $ROWS   cores: $(nproc)"

source benches/lib.sh

if [ ! -d "$W/store" ]; then
  "$R" simulate --out "$W/sim" --seed 1 --rows "$ROWS" > /dev/null
  "$R" ingest --store "$W/store" "$W/sim/observations.csv" > /dev/null
fi
measure cli_index "$R" index --store "$W/store" --out "$W/cli.parquet" --methodology "$M"
measure python_store_index python3 -c "import rentix, sys; rentix.Store(sys.argv[1]).index(sys.argv[2]).write_parquet(sys.argv[3])" "$W/store" "$M" "$W/py.parquet"
measure python_import python3 -c "import rentix"
measure spark_local2 python3 benches/spark_fix.py "$W/store" "$M" "$W/spark.parquet"
python3 - "$W" <<'PY'
import sys, polars as pl
w = sys.argv[1]
cli, py, spark = (pl.read_parquet(f"{w}/{n}.parquet") for n in ("cli", "py", "spark"))
assert py.equals(cli) and spark.equals(cli), "the three fixings differ"
print(f"  the three agree: {cli.height} fixings")
PY
ratio python_store_index cli_index
ratio spark_local2 cli_index
