#!/usr/bin/env bash
# Peak memory of the inputs that used to blow up (issue 25, "Resources that small
# inputs blow up"): a measurement, never a test. Each case is small on disk; before
# the size bounds and the bound on a grade's life they took 2-18 GB.
#
#   cargo build --release && bash benches/resources.sh [WORKDIR]
#
# Needs GNU time (/usr/bin/time -v) and python3 (to write the inputs).
set -euo pipefail
cd "$(dirname "$0")/.."
R="${RENTIX:-${CARGO_TARGET_DIR:-target}/release/rentix}"
W="${1:-$(mktemp -d)}"
mkdir -p "$W"
echo "binary: $R   workdir: $W"

peak() { # name, command... (a refusal is a result too: the exit code is shown)
  local name=$1; shift
  local code=0
  /usr/bin/time -v "$@" > "$W/$name.out" 2> "$W/$name.time" || code=$?
  local rss secs
  rss=$(grep "Maximum resident set size" "$W/$name.time" | awk '{print $NF}')
  secs=$(grep "Elapsed (wall clock)" "$W/$name.time" | awk '{print $NF}')
  printf '%-34s peak %8.1f MiB  %8s  exit %s\n' "$name" "$(awk -v r="$rss" 'BEGIN{print r/1024}')" "$secs" "$code"
}

python3 - "$W" <<'PY'
import re, sys
w = sys.argv[1]
head = "kind,observed_at,source,gpu,scope,term,price,price_unit,currency"
# 1. A header of 1,000,000 columns and 200 short rows (8 MB).
with open(f"{w}/wide_header.csv", "w") as f:
    f.write(head + "," + ",".join(f"c{i}" for i in range(1_000_000 - 9)) + "\n")
    for _ in range(200):
        f.write("listing,2025-03-03T12:00:00Z,a,h100-sxm-80gb,vm,on-demand,2.5,gpu_hour,USD\n")
# 2. A mapping of 5,583 [[emit]] blocks over 2,000 rows.
block = ('[[emit]]\nkind = "listing"\nobserved_at = "{observed_at}"\nsource = "{source}"\n'
         'gpu = "{gpu}"\nscope = "vm"\nterm = "on-demand"\nprice = "{price}"\n'
         'price_unit = "gpu_hour"\ncurrency = "USD"\n')
with open(f"{w}/many_emits.toml", "w") as f:
    f.write('name = "many"\n' + block * 5583)
with open(f"{w}/many_emits.csv", "w") as f:
    f.write("observed_at,source,gpu,price\n")
    for i in range(2000):
        f.write(f"2025-03-03T12:00:00Z,s{i % 50},h100-sxm-80gb,2.{i % 10}\n")
# 3. One row whose GPU name is 100 MB.
with open(f"{w}/long_gpu.csv", "w") as f:
    f.write(head + "\n")
    f.write("listing,2025-03-03T12:00:00Z,a," + "H" * 100_000_000 + ",vm,on-demand,2.5,gpu_hour,USD\n")
# 4. Listings in 2010 and 2026 for 1,440 grades (216 KB).
ids = re.findall(r'^id\s*=\s*"([^"]+)"', open("data/gpus.toml").read(), re.M)
terms = ["spot", "on-demand", "1w", "1m", "3m", "6m", "1y", "2y", "3y"]
scopes = ["vm", "bare-metal", "container", "managed-cluster"]
grades = [(g, s, t) for g in ids for s in scopes for t in terms][:1440]
with open(f"{w}/sixteen_years.csv", "w") as f:
    f.write(head + "\n")
    for g, s, t in grades:
        for day in ("2010-01-04", "2026-01-05"):
            f.write(f"listing,{day}T12:00:00Z,a,{g},{s},{t},2.5,gpu_hour,USD\n")
PY
ls -la "$W"/*.csv "$W"/*.toml | awk '{print $5, $NF}'

peak "1. header of 1M columns" "$R" ingest --store "$W/s1" "$W/wide_header.csv"
peak "2. 5,583 emit blocks" "$R" ingest --store "$W/s2" --mapping "$W/many_emits.toml" "$W/many_emits.csv"
peak "3. a 100 MB GPU name" "$R" ingest --store "$W/s3" "$W/long_gpu.csv"
"$R" ingest --store "$W/s4" "$W/sixteen_years.csv" > /dev/null
peak "4. index of 1,440 grades 2010+2026" "$R" index --store "$W/s4" --out "$W/f4.csv"
echo "fixing rows of case 4: $(($(wc -l < "$W/f4.csv") - 1))"
