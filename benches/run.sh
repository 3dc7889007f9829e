#!/usr/bin/env bash
# rentix benchmarks: a measurement, never a test. Each figure is reported with a
# baseline measured in the same run on the same data, because the machines are
# noisy: read the ratios, not the seconds.
#
#   cargo build --release && bash benches/run.sh [WORKDIR]
#
# Needs GNU time (/usr/bin/time -v) for peak memory, and taskset (util-linux) for
# the one-core runs of section 5.
set -euo pipefail
cd "$(dirname "$0")/.."
R="${RENTIX:-${CARGO_TARGET_DIR:-target}/release/rentix}"
W="${1:-$(mktemp -d)}"
mkdir -p "$W"
echo "binary: $R   workdir: $W   cores: $(nproc)"

source benches/lib.sh

# Baseline: CPython's csv module counting the rows of a file (a plain parse).
CSV_COUNT=(python3 -c "import csv,sys; print(sum(1 for _ in csv.reader(open(sys.argv[1]))))")

echo "== 1. simulate 10M rows"
[ -n "${SKIP_10M:-}" ] || measure simulate_10m "$R" simulate --out "$W/sim10m" --rows 10000000
[ -n "${SKIP_10M:-}" ] || measure baseline_wc_10m wc -l "$W/sim10m/observations.csv"
if [ -z "${SKIP_10M:-}" ]; then
  echo "  rows written: $(($(wc -l < "$W/sim10m/observations.csv") - 1))"
  ratio simulate_10m baseline_wc_10m
fi

echo "== 2. ingest 1M canonical rows"
rm -rf "$W/store1m" "$W/fix1m.csv" "$W/fix_regional.csv"
"$R" simulate --out "$W/sim1m" --rows 1000000 > /dev/null
rows=$(($(wc -l < "$W/sim1m/observations.csv") - 1))
measure ingest_1m "$R" ingest --store "$W/store1m" "$W/sim1m/observations.csv"
measure baseline_csv_1m "${CSV_COUNT[@]}" "$W/sim1m/observations.csv"
printf '  %d rows: %.0f rows/s\n' "$rows" "$(awk -v n="$rows" -v s="$(cat "$W/ingest_1m.secs")" 'BEGIN{print n/s}')"
ratio ingest_1m baseline_csv_1m

POLARS_READ=(python3 -c "import polars as pl, sys; print(pl.read_csv(sys.argv[1], infer_schema_length=0).height)")
if python3 -c "import polars" 2>/dev/null; then
  measure baseline_polars_1m "${POLARS_READ[@]}" "$W/sim1m/observations.csv"
  ratio ingest_1m baseline_polars_1m
fi

POLARS_PART=(python3 benches/polars_partitioned_write.py)
if python3 -c "import polars" 2>/dev/null; then
  rm -rf "$W/polars_part1m"
  measure baseline_polars_part_1m "${POLARS_PART[@]}" "$W/sim1m/observations.csv" "$W/polars_part1m"
  ratio ingest_1m baseline_polars_part_1m
fi

echo "== 2a. one day of 1M quotes (an administrator's daily file: one partition)"
rm -rf "$W/storeday"
"$R" simulate --out "$W/simday" --days 1 --start 2025-06-02 --rows 1000000 > /dev/null
measure ingest_day "$R" ingest --store "$W/storeday" "$W/simday/observations.csv"
if python3 -c "import polars" 2>/dev/null; then
  measure baseline_polars_day "${POLARS_READ[@]}" "$W/simday/observations.csv"
  ratio ingest_day baseline_polars_day
fi

echo "== 2b. ingest 3M canonical rows (linearity)"
rm -rf "$W/store3m"
"$R" simulate --out "$W/sim3m" --rows 3000000 > /dev/null
measure ingest_3m "$R" ingest --store "$W/store3m" "$W/sim3m/observations.csv"
ratio ingest_3m ingest_1m

if [ -z "${SKIP_10M:-}" ]; then
  echo "== 2c. ingest and index 10M canonical rows (memory stays bounded)"
  rm -rf "$W/store10m"
  measure ingest_10m "$R" ingest --store "$W/store10m" "$W/sim10m/observations.csv"
  ratio ingest_10m ingest_1m
  if python3 -c "import polars" 2>/dev/null; then
    measure baseline_polars_10m "${POLARS_READ[@]}" "$W/sim10m/observations.csv"
    ratio ingest_10m baseline_polars_10m
  fi
  echo "  store on disk: $(du -sm "$W/store10m/observations" | cut -f1) MiB"
  measure index_10m "$R" index --store "$W/store10m" --out "$W/fix10m.csv"
  ratio index_10m ingest_10m
fi

echo "== 3. index every grade of the 1M-observation store"
measure index_1m "$R" index --store "$W/store1m" --out "$W/fix1m.csv"
ratio index_1m baseline_csv_1m

ratio index_1m ingest_1m
echo "  store on disk: $(du -sm "$W/store1m/observations" | cut -f1) MiB"

echo "== 3b. a listings feed pooled over 7 days: rentix against a plain Python pipeline"
rm -rf "$W/store_l" "$W/fix_l.csv"
measure python_listings_1m python3 benches/python_listings_pipeline.py "$W/sim1m/observations.csv" "$W/py_listings.csv"
measure ingest_l "$R" ingest --store "$W/store_l" "$W/sim1m/observations.csv"
measure index_l "$R" index --store "$W/store_l" --out "$W/fix_l.csv" --methodology data/methodologies/listings_7d_sigma.toml
awk -v a="$(cat "$W/ingest_l.secs")" -v b="$(cat "$W/index_l.secs")" -v p="$(cat "$W/python_listings_1m.secs")" \
  'BEGIN{printf "  python / (rentix ingest + index) = %.2f; python / rentix index = %.1f\n", p/(a+b), p/b}'

echo "== 4. track: every grade and regional grade x 1000 bootstrap resamples"
sed -e 's/^regional = false/regional = true/' -e 's|^patterns = \["\*/\*/\*"\]|patterns = ["*/*/*", "*/*/*@*"]|' data/methodologies/default.toml > "$W/regional.toml"
"$R" index --store "$W/store1m" --out "$W/fix_regional.csv" --methodology "$W/regional.toml" > /dev/null
grades=$(cut -d, -f2 "$W/fix_regional.csv" | sort -u | wc -l)
measure track_1000 "$R" track --index "$W/fix_regional.csv" --rent "$W/sim1m/rent_producer_h100.csv" --resamples 1000 --out "$W/track.csv"
measure track_0 "$R" track --index "$W/fix_regional.csv" --rent "$W/sim1m/rent_producer_h100.csv" --resamples 0 --out "$W/track0.csv"
echo "  candidates: $((grades - 1))"
ratio track_1000 track_0

echo "== 5. two threads against one (taskset pins a run to one core)"
if command -v taskset > /dev/null; then
  rm -rf "$W/store_t1" "$W/store_t2"
  measure ingest_1core taskset -c 0 "$R" ingest --store "$W/store_t1" "$W/sim1m/observations.csv"
  measure ingest_2core "$R" ingest --store "$W/store_t2" "$W/sim1m/observations.csv"
  ratio ingest_1core ingest_2core
  measure index_1core taskset -c 0 "$R" index --store "$W/store1m" --out "$W/fix_t1.csv"
  measure index_2core "$R" index --store "$W/store1m" --out "$W/fix_t2.csv"
  ratio index_1core index_2core
else
  echo "  taskset not found (util-linux): skipped"
fi

echo "== 6. a store many runs wrote, before and after store compact"
# The 1M file dealt round robin into 8 files, each ingested by a run of its own:
# every date gets 8 files, as from hourly ingests of a feed.
rm -rf "$W/store_8" "$W/parts8" && mkdir -p "$W/parts8"
tail -n +2 "$W/sim1m/observations.csv" | awk -v d="$W/parts8" -v h="$(head -1 "$W/sim1m/observations.csv")" \
  'BEGIN{for(i=0;i<8;i++) print h > (d "/p" i ".csv")} {print > (d "/p" (NR%8) ".csv")}'
for i in 0 1 2 3 4 5 6 7; do "$R" ingest --store "$W/store_8" "$W/parts8/p$i.csv" > /dev/null; done
echo "  files before: $(find "$W/store_8/observations" -name '*.parquet' | wc -l), $(du -sm "$W/store_8/observations" | cut -f1) MiB"
measure index_8runs "$R" index --store "$W/store_8" --out "$W/fix_8a.csv"
measure compact_8runs "$R" store compact --store "$W/store_8"
echo "  files after: $(find "$W/store_8/observations" -name '*.parquet' | wc -l), $(du -sm "$W/store_8/observations" | cut -f1) MiB"
measure index_compacted "$R" index --store "$W/store_8" --out "$W/fix_8b.csv"
cmp -s "$W/fix_8a.csv" "$W/fix_8b.csv" && echo "  fixings identical before and after" || echo "  FIXINGS DIFFER"
ratio index_8runs index_compacted
ratio compact_8runs ingest_1m
