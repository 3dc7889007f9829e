#!/usr/bin/env bash
# An intraday day's publication at two lengths of history (issues 47 and 48): a
# 15-minute store of DAYS days (`simulate --cadence 15m`, 120 by default: 3.2M
# observations, 12 grades), the shipped intraday methodology published up to the
# day before SHORT (30) and up to the day before DAYS, then each file given its
# next day. Baseline in the same run: the same day fixed into a new file (what the
# day costs without any history). Then the same last day onto a file of its SHORT
# days before and onto one of all the days before: one day, one volume, two
# lengths of history. A measurement, never a test.
#
#   cargo build --release && bash benches/intraday_day.sh [WORKDIR] [DAYS] [SHORT]
#
# RENTIX_BASE=/path/to/an/older/rentix measures it beside the binary under test.
set -euo pipefail
cd "$(dirname "$0")/.."
R="${RENTIX:-${CARGO_TARGET_DIR:-target}/release/rentix}"
W="${1:-$(mktemp -d)}"
DAYS="${2:-120}"
SHORT="${3:-30}"
M=intraday_lowest_listing_15m
mkdir -p "$W"
echo "binary: $R   workdir: $W   days: $DAYS and $SHORT   cores: $(nproc)"
source benches/lib.sh

if [ ! -d "$W/store" ]; then
  "$R" simulate --out "$W/sim" --start 2024-01-01 --days "$DAYS" --cadence 15m > /dev/null
  measure "ingest ${DAYS}d 15m" "$R" ingest --store "$W/store" "$W/sim/observations.csv"
  rm -rf "$W/sim"
fi
day_of() { date -d "2024-01-01 + $(($1 - 1)) days" +%F; }
for who in base new; do
  bin=$R
  if [ "$who" = base ]; then
    [ -n "${RENTIX_BASE:-}" ] || continue
    bin=$RENTIX_BASE
  fi
  for n in "$SHORT" "$DAYS"; do
    d=$(day_of "$n"); prev=$(day_of $((n - 1)))
    rm -f "$W/$who$n"* "$W/${who}fresh$n"*
    "$bin" index --store "$W/store" --methodology $M --to "$prev" --out "$W/$who$n.csv" > /dev/null
    measure "$who: day $n into a new file" "$bin" index --store "$W/store" --methodology $M --from "$d" --to "$d" --out "$W/${who}fresh$n.csv"
    measure "$who: day $n onto $((n - 1)) days" "$bin" index --store "$W/store" --methodology $M --from "$d" --to "$d" --out "$W/$who$n.csv"
    echo "  $(grep -o 'holds [0-9]* stamps' "$W/$who: day $n onto $((n - 1)) days.out"); $(du -b "$W/$who${n}_receipts.csv" | cut -f1) bytes of receipts"
    ratio "$who: day $n onto $((n - 1)) days" "$who: day $n into a new file"
  done
  ratio "$who: day $DAYS onto $((DAYS - 1)) days" "$who: day $SHORT onto $((SHORT - 1)) days"
done

# The same day, two lengths of history: a file of the SHORT days before it against
# one of all the days before it.
d=$(day_of "$DAYS"); prev=$(day_of $((DAYS - 1))); since=$(day_of $((DAYS - SHORT)))
for who in base new; do
  bin=$R
  if [ "$who" = base ]; then
    [ -n "${RENTIX_BASE:-}" ] || continue
    bin=$RENTIX_BASE
  fi
  rm -f "$W/${who}short"* "$W/${who}long"*
  "$bin" index --store "$W/store" --methodology $M --from "$since" --to "$prev" --out "$W/${who}short.csv" > /dev/null
  "$bin" index --store "$W/store" --methodology $M --to "$prev" --out "$W/${who}long.csv" > /dev/null
  measure "$who: day $DAYS onto $SHORT days" "$bin" index --store "$W/store" --methodology $M --from "$d" --to "$d" --out "$W/${who}short.csv"
  measure "$who: day $DAYS onto $((DAYS - 1)) days" "$bin" index --store "$W/store" --methodology $M --from "$d" --to "$d" --out "$W/${who}long.csv"
  ratio "$who: day $DAYS onto $((DAYS - 1)) days" "$who: day $DAYS onto $SHORT days"
done
