#!/usr/bin/env bash
# Intraday fixings against the daily run of the same store (issue 28): a month of
# 15-minute listings (`simulate --cadence 15m`), fixed at every stamp by the shipped
# intraday methodology (2,880 stamps a grade) and once a day by the default
# methodology. A measurement, never a test.
#
#   cargo build --release && bash benches/intraday.sh [WORKDIR] [DAYS]
#
# Needs GNU time (/usr/bin/time -v). 30 days are about 1.6M observations.
set -euo pipefail
cd "$(dirname "$0")/.."
R="${RENTIX:-${CARGO_TARGET_DIR:-target}/release/rentix}"
W="${1:-$(mktemp -d)}"
DAYS="${2:-30}"
mkdir -p "$W"
echo "binary: $R   workdir: $W   days: $DAYS   cores: $(nproc)"
source benches/lib.sh

if [ ! -d "$W/store" ]; then
  measure "simulate 15m" "$R" simulate --out "$W/sim" --seed 3 --start 2025-06-01 --days "$DAYS" --cadence 15m
  measure "ingest 15m" "$R" ingest --store "$W/store" "$W/sim/observations.csv"
  rm -rf "$W/sim"
fi
# Ten grades: the on-demand grades of five GPUs in two scopes.
cat > "$W/ten.toml" <<'TOML'
version = "bench-intraday-10"
[calendar]
cadence = "15m"
[grades]
patterns = ["a100-sxm-80gb/bare-metal/on-demand", "a100-sxm-80gb/vm/on-demand",
  "h100-sxm-80gb/bare-metal/on-demand", "h100-sxm-80gb/vm/on-demand",
  "h200-sxm-141gb/bare-metal/on-demand", "h200-sxm-141gb/vm/on-demand",
  "b200-sxm-180gb/bare-metal/on-demand", "b200-sxm-180gb/vm/on-demand",
  "mi300x-192gb/bare-metal/on-demand", "mi300x-192gb/vm/on-demand"]
[intraday]
kinds = ["listing"]
per_contributor = "lowest"
window = "1h"
max_carry = "6h"
vote_ewma = "1h"
min_panel = 5
trim = 0.1666667
decimals = 6
publish_receipts = true
[intraday.screen]
history = 20
warm_up = 10
k_sigma = 3.0
sigma_floor = 0.03
jump = 0.25
corroborating = 2
[intraday.sigma_votes]
days = 90
floor = 0.03
[intraday.weights]
floor = 0.025
cap = 0.30
TOML
measure "index daily (default)" "$R" index --store "$W/store" --out "$W/daily.parquet"
measure "index 15m, 10 grades" "$R" index --store "$W/store" --methodology "$W/ten.toml" --out "$W/intraday.parquet"
sed 's/^/  /' "$W/index 15m, 10 grades.out"
# The same ten grades with the liveness weight model (issue 50: it must not make a
# month cost more than twice the fixed weights).
{ cat "$W/ten.toml"; printf '[intraday.weights.liveness]\n'; } | sed 's/^version = .*/version = "bench-intraday-10-liveness"/' > "$W/ten_live.toml"
measure "index 15m, 10 grades, liveness weights" "$R" index --store "$W/store" --methodology "$W/ten_live.toml" --out "$W/intraday_live.parquet"
sed 's/^/  /' "$W/index 15m, 10 grades, liveness weights.out"
measure "index 15m, every on-demand grade" "$R" index --store "$W/store" --methodology intraday_lowest_listing_15m --out "$W/all.parquet"
sed 's/^/  /' "$W/index 15m, every on-demand grade.out"
echo "== ratios"
ratio "index 15m, 10 grades" "index daily (default)"
ratio "index 15m, every on-demand grade" "index daily (default)"
ratio "index 15m, 10 grades, liveness weights" "index 15m, 10 grades"
