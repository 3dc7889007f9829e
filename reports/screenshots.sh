#!/usr/bin/env bash
# Screenshots of the demo report's first screens, as a new user sees them, from
# headless Chromium (`apt-get install chromium`). Run after `cargo run --release -- demo`.
#   index_screenshot.png     the board: the first screen of the demo report
#   backtest_screenshot.png  the hedge card: the first screen of one backtest's report
#   contract_lab_screenshot.png  the contract lab's comparison
#   report_screenshot.png    the demo report's first two screens
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${CARGO_TARGET_DIR:-target}/release/rentix"
demo=reports/demo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shot() { # size out html
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size="$1" --screenshot="$2" "file://$(realpath "$3")" 2>/dev/null
}
"$bin" report --in "$demo/backtest_producer_h100_invoice" --out "$tmp/backtest.html" >/dev/null
"$bin" report --in "$demo/contract_lab" --out "$tmp/lab.html" >/dev/null
shot 1200,1000 "$demo/index_screenshot.png" "$demo/report.html"
shot 1200,2400 "$demo/report_screenshot.png" "$demo/report.html"
shot 1200,1000 "$demo/backtest_screenshot.png" "$tmp/backtest.html"
shot 1200,1500 "$demo/contract_lab_screenshot.png" "$tmp/lab.html"
