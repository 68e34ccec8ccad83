"""Reads a fairbench interval log with the hdrhistogram package; prints per tag: intervals, total count, p99 (us), max (us)."""
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
ref = HdrHistogram(1, 24 * 3600 * 10**9, 3)
reader = HistogramLogReader(sys.argv[1], ref)
out = {}
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    tag = h.get_tag() if hasattr(h, "get_tag") else None
    t = out.setdefault(tag or "untagged", {"intervals": 0, "count": 0, "counts": [], "p99_ns": []})
    t["intervals"] += 1
    t["count"] += h.get_total_count()
    t["counts"].append(h.get_total_count())
    t["p99_ns"].append(h.get_value_at_percentile(99))
print(json.dumps(out))
