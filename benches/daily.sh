#!/usr/bin/env bash
# The daily publication against the length of the history (issue 27): a one-day
# `index --from D --to D` on a 1-year and on an 8-year store of the same daily
# volume, with the state the previous publication left (incremental) and without it
# (the whole store read, as every run did before). A measurement, never a test.
#
#   cargo build --release && bash benches/daily.sh [WORKDIR] [ROWS_PER_DAY]
#
# Needs GNU time (/usr/bin/time -v). At 5,000 rows a day the 8-year store is 14.6M
# rows: about 3 GB of workdir and a few minutes to build. DAY_ONLY=1 measures only
# the incremental day (no full index and no whole-store day: at 50,000 rows a day,
# 146M rows, those are most of the run's time).
set -euo pipefail
cd "$(dirname "$0")/.."
R="${RENTIX:-${CARGO_TARGET_DIR:-target}/release/rentix}"
W="${1:-$(mktemp -d)}"
PER_DAY="${2:-5000}"
mkdir -p "$W"
echo "binary: $R   workdir: $W   rows a day: $PER_DAY   cores: $(nproc)"

source benches/lib.sh
ratio_of() { # what (secs or rss), a, b
  printf '  %s ratio %s / %s = %.2f\n' "$1" "$2" "$3" "$(awk -v a="$(cat "$W/$2.$1")" -v b="$(cat "$W/$3.$1")" 'BEGIN{print a/b}')"
}

# One simulation of eight years; the 1-year store holds its last year, so both
# stores have the same observations on every day they share (a separate 1-year
# simulation has a younger market with fewer rows a day in its last months).
if [ ! -d "$W/store8" ] || [ ! -d "$W/store1" ]; then
  "$R" simulate --out "$W/sim" --seed 3 --start 2018-01-01 --days 2922 --rows $((2922 * PER_DAY)) > /dev/null
  awk -F, 'NR == 1 || substr($3, 1, 4) == "2025"' "$W/sim/observations.csv" > "$W/sim/last_year.csv"
  measure "ingest 8y" "$R" ingest --store "$W/store8" "$W/sim/observations.csv"
  measure "ingest 1y" "$R" ingest --store "$W/store1" "$W/sim/last_year.csv"
  rm -rf "$W/sim"
fi
for years in 1 8; do
  # The store's last fixing date, from its run record (a month's directory names
  # only the month), and the day before it.
  last=$(grep -o '"last_fixing_date": "[0-9-]*"' "$W/store$years/runs/run-000001.json" | tail -1 | cut -d'"' -f4)
  before=$(date -d "$last - 1 day" +%F)
  rm -rf "$W/full$years" "$W/pub$years"; mkdir -p "$W/full$years" "$W/pub$years"
  [ -z "${DAY_ONLY:-}" ] && measure "index full ${years}y" "$R" index --store "$W/store$years" --out "$W/full$years/f.csv"
  # The daily cycle: the history published through the day before, then the new day.
  "$R" index --store "$W/store$years" --out "$W/pub$years/f.csv" --to "$before" > /dev/null
  measure "one day, incremental ${years}y" "$R" index --store "$W/store$years" --out "$W/pub$years/f.csv" --from "$last" --to "$last"
  grep '^read:\|^kept:' "$W/one day, incremental ${years}y.out" | sed 's/^/  /'
  [ -n "${DAY_ONLY:-}" ] && continue
  rm "$W/pub$years/f_state.json"
  measure "one day, whole store ${years}y" "$R" index --store "$W/store$years" --out "$W/pub$years/f.csv" --from "$last" --to "$last"
done
echo "== ratios (8 years / 1 year)"
ratio_of secs "one day, incremental 8y" "one day, incremental 1y"
ratio_of rss "one day, incremental 8y" "one day, incremental 1y"
[ -n "${DAY_ONLY:-}" ] && exit 0
ratio_of secs "one day, whole store 8y" "one day, whole store 1y"
ratio_of rss "one day, whole store 8y" "one day, whole store 1y"
ratio_of secs "index full 8y" "index full 1y"
ratio_of rss "index full 8y" "index full 1y"
echo "== the day against the whole history, same store"
ratio_of secs "one day, incremental 8y" "one day, whole store 8y"
