#!/usr/bin/env python3
"""Checks a combined result against its shards with HdrHistogram's own Python package (an
implementation independent of fairbench's): each class's histogram of the combined result
must equal the sum of the shards', and its count and percentiles the ones read from that sum.

    python3 scripts/merge-check.py all.json shard-0.json shard-1.json shard-2.json

Prints one line per class; exits 1 on any difference."""
import json
import math
import sys

from hdrh.histogram import HdrHistogram

QUANTILES = [("p50_us", 50.0), ("p95_us", 95.0), ("p99_us", 99.0), ("p999_us", 99.9)]


def buckets(h):
    return [(v.value_iterated_to, v.count_at_value_iterated_to) for v in h.get_recorded_iterator()]


def at_percentile(h, q):
    """fairbench's method: the upper bound of the bucket holding rank ceil(q/100 * count)."""
    rank = max(1, math.ceil(q / 100.0 * h.get_total_count()))
    seen = 0
    for v in h.get_recorded_iterator():
        seen += v.count_at_value_iterated_to
        if seen >= rank:
            return h.get_highest_equivalent_value(v.value_iterated_to)
    return h.get_max_value()


def main(combined_path, shard_paths):
    combined = json.load(open(combined_path))
    shards = [json.load(open(p)) for p in shard_paths]
    failed = False
    print(f"{'class':<8} {'count':>10} {'sum of shards':>14}   " + "  ".join(f"{k:>18}" for k, _ in QUANTILES))
    for name, stats in sorted(combined["stats"].items()):
        parts = [s["stats"][name] for s in shards if name in s["stats"]]
        merged = HdrHistogram(1, 3_600_000_000_000, 3)
        for p in parts:
            merged.add(HdrHistogram.decode(p["histogram"]))
        lo = min(p["min_us"] for p in parts if p["count"]) if merged.get_total_count() else 0.0
        hi = max(p["max_us"] for p in parts)
        same_histogram = buckets(HdrHistogram.decode(stats["histogram"])) == buckets(merged)
        cells = []
        for key, q in QUANTILES:
            expected = min(max(at_percentile(merged, q) / 1000.0, lo), hi) if merged.get_total_count() else 0.0
            ok = abs(stats[key] - expected) < 1e-9
            failed |= not ok
            cells.append(f"{stats[key]:>9.1f}{'=' if ok else '!='}{expected:<8.1f}")
        count_ok = stats["count"] == merged.get_total_count() == sum(p["count"] for p in parts)
        failed |= not (count_ok and same_histogram)
        print(f"{name:<8} {stats['count']:>10} {merged.get_total_count():>14}   " + "  ".join(cells)
              + ("" if same_histogram else "   HISTOGRAM DIFFERS"))
    print("exact merge: " + ("FAILED" if failed else "every class's histogram is the sum of the shards', every percentile read from it"))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
