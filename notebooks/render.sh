#!/usr/bin/env bash
# Executes the notebooks on the README's market (simulate --seed 7 --days 400,
# ingested into a store) and writes them, outputs and figures included, to
# reports/notebooks/, where a code host shows them with their pictures. The
# notebooks in notebooks/ stay without outputs (they are the source); CI executes
# them on every run and fails on any error.
#
# Needs the CLI built (cargo build --release) and the package with Jupyter:
#   pip install ./python jupyter nbconvert matplotlib
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
bin="${CARGO_TARGET_DIR:-$repo/target}/release/rentix"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$bin" simulate --out "$work/sim" --seed 7 --days 400 >/dev/null
"$bin" ingest --store "$work/store" "$work/sim/observations.csv" >/dev/null
cp notebooks/index_explorer.ipynb notebooks/hedge_analysis.ipynb "$work/"
mkdir -p "$work/figures" reports/notebooks
# Relative paths, so that the outputs name no machine's directories.
(cd "$work" && RENTIX_STORE=store RENTIX_SIM=sim RENTIX_OUT=figures RENTIX_REPO="$repo" \
  jupyter nbconvert --to notebook --execute --output-dir "$repo/reports/notebooks" \
  index_explorer.ipynb hedge_analysis.ipynb)
echo "wrote reports/notebooks/index_explorer.ipynb and reports/notebooks/hedge_analysis.ipynb"
