#!/usr/bin/env python3
"""Counts test cases from Meson test logs (testlog.json): each TAP line of a TAP test counts once
('ok' passes, 'not ok' fails, '# SKIP' skips); other tests count by their result. Prints
'N passed, N failed' (and skips) as the last line; exits 1 when anything failed or a log is missing,
2 on usage (no log named, an option: -h and --help print this)."""
import json
import re
import sys

USAGE = "usage: testcount.py TESTLOG.json...  (--help says more)"
paths = sys.argv[1:]
if "-h" in paths or "--help" in paths:
    print(__doc__.strip())
    print(USAGE)
    sys.exit(0)
for p in paths or [None]:
    if p is None or not p or p.startswith("-"):
        print("testcount: error: %s\n%s" % ("no test log" if p is None else "TESTLOG %r: want a file (a path"
                                           " that does not start with '-')" % p, USAGE), file=sys.stderr)
        sys.exit(2)

passed = failed = skipped = 0
missing = []
for path in paths:
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError:
        missing.append(path)
        continue
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        result = t.get("result", "")
        tap = [l for l in (t.get("stdout") or t.get("stdo") or "").splitlines() if re.match(r"^(not )?ok\b", l)]
        if tap and result not in ("SKIP",):
            for l in tap:
                if "# SKIP" in l or "# skip" in l:
                    skipped += 1
                elif l.startswith("not ok") and "# TODO" not in l:
                    failed += 1
                else:
                    passed += 1
            if result in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS") and not any(
                    l.startswith("not ok") for l in tap):
                failed += 1  # crashed after its last TAP line
        elif result == "SKIP":
            skipped += 1
        elif result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        else:
            failed += 1
for m in missing:
    print(f"testcount: no test log at {m} (did the build fail?)", file=sys.stderr)
print(f"{skipped} skipped")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed or missing else 0)
