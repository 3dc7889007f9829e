#!/usr/bin/env bash
# Issue 48's same-run table: ingest against the same-work polars script
# (shared/perf/ref_polars_ingest.py, whole processes, REPS interleaved runs, the
# median of each), then ingest, full index and the one-shot on one core and on two
# (taskset and RAYON_NUM_THREADS=1 for one; REPS interleaved runs, medians: one run
# each swung by 10% on this machine), the one-shot beside the plain-Python listings
# pipeline. Every rentix output of the two core counts is compared byte for byte.
# A measurement, never a test.
#
#   cargo build --release && pip install polars numpy && \
#     bash benches/ingest_scaling.sh [WORKDIR] [ROWS] [REPS]
#
# RENTIX=target/dist/rentix measures the production build (cargo build --profile
# dist), RENTIX_BASE=/path/to/an/older/rentix measures another beside it (the
# release build, say);
# PYTHON= the interpreter that has polars (python3 by default).
set -euo pipefail
cd "$(dirname "$0")/.."
R="${RENTIX:-${CARGO_TARGET_DIR:-target}/release/rentix}"
W="${1:-$(mktemp -d)}"
ROWS="${2:-1000000}"
REPS="${3:-5}"
PY="${PYTHON:-python3}"
SHARED="${SHARED:-../shared}"
mkdir -p "$W"
echo "binary: $R   workdir: $W   rows: $ROWS   reps: $REPS   cores: $(nproc)"
bins=("$R")
[ -n "${RENTIX_BASE:-}" ] && bins=("$RENTIX_BASE" "$R")

[ -f "$W/canonical.csv" ] || "$PY" "$SHARED/perf/gen_canonical.py" "$ROWS" "$W/canonical.csv"
[ -f "$W/sim/observations.csv" ] || "$R" simulate --out "$W/sim" --seed 1 --rows "$ROWS" > /dev/null

# seconds, user seconds and peak KiB of one command, its output discarded.
run() { /usr/bin/time -f "%e %U %M" "$@" > /dev/null 2> "$W/time" || { cat "$W/time"; exit 1; }; tail -1 "$W/time"; }
median() { sort -n | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "== ingest of $ROWS canonical rows against the polars script ($REPS runs each, interleaved)"
: > "$W/ingest.txt"
for _ in $(seq "$REPS"); do
  rm -rf "$W/pol"; echo "polars $(run "$PY" "$SHARED/perf/ref_polars_ingest.py" "$W/canonical.csv" "$W/pol")" >> "$W/ingest.txt"
  for b in "${bins[@]}"; do
    rm -rf "$W/st"; echo "$b $(run "$b" ingest --store "$W/st" "$W/canonical.csv")" >> "$W/ingest.txt"
  done
done
pol=$(awk '$1=="polars"{print $2}' "$W/ingest.txt" | median)
printf '  %-40s median %6.2f s (runs: %s)\n' polars "$pol" "$(awk '$1=="polars"{printf "%s ", $2}' "$W/ingest.txt")"
for b in "${bins[@]}"; do
  m=$(awk -v b="$b" '$1==b{print $2}' "$W/ingest.txt" | median)
  mem=$(awk -v b="$b" '$1==b{print $4}' "$W/ingest.txt" | median)
  printf '  %-40s median %6.2f s, %4.0f MiB, %.2fx the polars script (runs: %s)\n' "$b" "$m" "$(awk -v k="$mem" 'BEGIN{print k/1024}')" \
    "$(awk -v a="$m" -v p="$pol" 'BEGIN{print a/p}')" "$(awk -v b="$b" '$1==b{printf "%s ", $2}' "$W/ingest.txt")"
done

echo "== one core against two (ingest, full index, one-shot; $REPS interleaved runs, medians), and the Python listings pipeline"
: > "$W/cores.txt"
for _ in $(seq "$REPS"); do
  echo "python o 0 $(run python3 benches/python_listings_pipeline.py "$W/sim/observations.csv" "$W/py_listings.csv")" >> "$W/cores.txt"
  for b in "${bins[@]}"; do
    for cores in 1 2; do
      if [ "$cores" = 1 ]; then pre=(env RAYON_NUM_THREADS=1 taskset -c 0); else pre=(env); fi
      rm -rf "$W/st$cores"
      echo "$b i $cores $(run "${pre[@]}" "$b" ingest --store "$W/st$cores" "$W/canonical.csv")" >> "$W/cores.txt"
      echo "$b x $cores $(run "${pre[@]}" "$b" index --store "$W/st$cores" --out "$W/fix$cores.csv")" >> "$W/cores.txt"
      # A first publication, as the Python pipeline's is: nothing published before.
      rm -f "$W/one$cores.csv" "$W/one$cores".csv.* "$W/one$cores"_*
      echo "$b o $cores $(run "${pre[@]}" "$b" index --input "$W/sim/observations.csv" --methodology listings_7d_sigma --out "$W/one$cores.csv")" >> "$W/cores.txt"
    done
    # The same one-shot again over its own publication (read, checked against its
    # digest, compared row by row for restatements): work the Python pipeline does
    # not do, shown beside the same-work figure.
    echo "$b r 2 $(run "$b" index --input "$W/sim/observations.csv" --methodology listings_7d_sigma --out "$W/one2.csv")" >> "$W/cores.txt"
    for f in fix one; do cmp -s "$W/${f}1.csv" "$W/${f}2.csv" || { echo "  $b: $f: 1 and 2 cores differ"; exit 1; }; done
    (cd "$W/st1" && find observations -type f | sort | xargs sha256sum) > "$W/p1"
    (cd "$W/st2" && find observations -type f | sort | xargs sha256sum) > "$W/p2"
    cmp -s "$W/p1" "$W/p2" || { echo "  $b: partitions: 1 and 2 cores differ"; exit 1; }
  done
done
# median of field F (2: seconds, 4: peak KiB) of binary B, step K, cores C
med() { awk -v b="$1" -v k="$2" -v c="$3" -v f="$4" '$1==b && $2==k && $3==c {print $(f+3)}' "$W/cores.txt" | median; }
py=$(med python o 0 1)
echo "  python listings pipeline: median $py s"
for b in "${bins[@]}"; do
  echo "  $b (1 core -> 2 cores: median seconds, speed-up; the same bytes out)"
  for s in i:ingest x:index o:one-shot; do
    k=${s%%:*}; a=$(med "$b" "$k" 1 1); c=$(med "$b" "$k" 2 1); mem=$(med "$b" "$k" 2 3)
    printf '    %-9s %6.2f -> %6.2f s  %.2fx  (peak %4.0f MiB)\n' "${s#*:}" "$a" "$c" "$(awk -v a="$a" -v c="$c" 'BEGIN{print a/c}')" "$(awk -v k="$mem" 'BEGIN{print k/1024}')"
  done
  printf '    one-shot against the Python pipeline: %.2fx faster (a first publication, as the pipeline writes)\n' "$(awk -v p="$py" -v c="$(med "$b" o 2 1)" 'BEGIN{print p/c}')"
  printf '    one-shot over its own publication: %6.2f s, %.2fx faster than the pipeline (the published file read, checked and compared too)\n' "$(med "$b" r 2 1)" "$(awk -v p="$py" -v c="$(med "$b" r 2 1)" 'BEGIN{print p/c}')"
done
