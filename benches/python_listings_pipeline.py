"""Baseline for benches/run.sh: what an open listings index's own pipeline does, in
plain Python (standard library only): read the observations CSV, keep listings, per
grade and day drop values outside 2 sigma of the 20%-trimmed mean, then fix each
grade on each day as the median of the pooled last 7 days. The same work as
`rentix ingest` + `rentix index --methodology data/methodologies/listings_7d_sigma.toml`
(without rentix's validation, dedupe, hierarchy or audit trail).

    python3 benches/python_listings_pipeline.py observations.csv out.csv
"""
import csv
import statistics
import sys
from collections import defaultdict
from datetime import date, timedelta


def trimmed_mean(v, share):
    v = sorted(v)
    k = int(share * len(v))
    kept = v[k:len(v) - k] or v
    return sum(kept) / len(kept)


def main(src, dst):
    by_day = defaultdict(list)
    with open(src, newline="") as f:
        rows = csv.reader(f)
        head = next(rows)
        i = {h: n for n, h in enumerate(head)}
        for r in rows:
            if r[i["kind"]] != "listing" or r[i["price_unit"]] != "gpu_hour" or r[i["currency"]] != "USD":
                continue
            try:
                p = float(r[i["price"]])
                d = date.fromisoformat(r[i["observed_at"]][:10])
            except ValueError:
                continue
            if not 0 < p < float("inf"):
                continue
            by_day[(r[i["gpu"]] + "/" + r[i["scope"]] + "/" + r[i["term"]], d)].append(p)
    kept = {}
    for key, v in by_day.items():
        if len(v) >= 3:
            c, s = trimmed_mean(v, 0.2), statistics.stdev(v)
            v = [x for x in v if abs(x - c) <= 2 * s]
        kept[key] = v
    grades = defaultdict(set)
    for g, d in kept:
        grades[g].add(d)
    with open(dst, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["date", "grade", "value"])
        for g in sorted(grades):
            days = sorted(grades[g])
            d = days[0]
            while d <= days[-1]:
                pool = [x for k in range(7) for x in kept.get((g, d - timedelta(days=k)), [])]
                if len(pool) >= 5:
                    w.writerow([d.isoformat(), g, statistics.median(pool)])
                d += timedelta(days=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
