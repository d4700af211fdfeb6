#!/usr/bin/env python3
"""nsys_ranges.py TRACE_CSV RESULTS_JSONL...: the NVTX push/pop trace that `nsys stats` exported
against the records' profiles. Every range must be in the `speedlab` domain; every region path of
every case record (study > variant > size > the study's own regions) must be an NVTX path with as
many instances as the record's calls (summed over the cases), and no NVTX path below a study range
may be missing from the records. Untimed work (the check, the warm-up) runs outside a study range, so
it is not counted. Prints a table; exit 1 on any difference."""
import csv
import json
import sys
from collections import Counter

DOMAIN = "speedlab:"


def nvtx_paths(trace_csv):
    rows = list(csv.DictReader(open(trace_csv, newline="")))
    if not rows:
        sys.exit("nsys_ranges: the NVTX trace is empty: no speedlab range reached Nsight Systems")
    foreign = sorted({r["Name"] for r in rows if not r["Name"].startswith(DOMAIN)})
    if foreign:
        sys.exit(f"nsys_ranges: ranges outside the speedlab domain: {foreign[:5]}")
    by_id = {(r["PID"], r["TID"], r["RangeId"]): r for r in rows}
    paths = Counter()
    for r in rows:
        path, node = [], r
        while node is not None:
            path.append(node["Name"][len(DOMAIN):])
            parent = node.get("ParentId", "None")
            node = by_id.get((node["PID"], node["TID"], parent)) if parent not in ("", "None") else None
        paths[tuple(reversed(path))] += 1
    return paths


def record_paths(files):
    calls, studies = Counter(), set()
    for f in files:
        for line in open(f):
            rec = json.loads(line)
            if rec.get("kind") != "case" or rec.get("status") != "ok":
                continue
            studies.add(rec["study"])
            for reg in rec["profile"]["regions"]:
                calls[tuple(reg["path"])] += reg["calls"]
    if not calls:
        sys.exit("nsys_ranges: no ok case record with a profile")
    return calls, studies


def main():
    nvtx = nvtx_paths(sys.argv[1])
    want, studies = record_paths(sys.argv[2:])
    got = Counter({p: n for p, n in nvtx.items() if p[0] in studies})
    bad = 0
    print(f"{'region path':60} {'record calls':>12} {'nsys ranges':>12}")
    for path in sorted(set(want) | set(got)):
        w, g = want.get(path, 0), got.get(path, 0)
        mark = "" if w == g else "  <- differs"
        bad += w != g
        print(f"{' > '.join(path):60} {w:>12} {g:>12}{mark}")
    untimed = sum(n for p, n in nvtx.items() if p[0] not in studies)
    print(f"(and {untimed} ranges outside a study range: the untimed check and warm-up)")
    if bad:
        sys.exit(f"nsys_ranges: {bad} region paths differ between the records and Nsight Systems")
    print(f"nsys_ranges: {len(want)} region paths, nesting and counts as in the records")


if __name__ == "__main__":
    main()
