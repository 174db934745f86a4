#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# summary.py NAME BUILD_DIR SECONDS: one line of test counts per suite from meson's
# testlog.json (the last `meson test` run in BUILD_DIR), for .ci/run's table of targets.
import json
import sys

name, build, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
suites = {}
for line in open(build + "/meson-logs/testlog.json"):
    t = json.loads(line)
    suite = t["name"].split(":", 1)[1].split(" / ", 1)[0].strip()
    c = suites.setdefault(suite, {"passed": 0, "failed": 0, "skipped": 0})
    r = t["result"]
    if r in ("OK", "EXPECTEDFAIL"):
        c["passed"] += 1
    elif r == "SKIP":
        c["skipped"] += 1
    else:
        c["failed"] += 1
parts = ["%s %d/%d%s" % (s, c["passed"], c["passed"] + c["failed"],
                         " (%d skipped)" % c["skipped"] if c["skipped"] else "")
         for s, c in sorted(suites.items())]
failed = sum(c["failed"] for c in suites.values())
print("%-24s %s; %s; %s s" % (name + ":", ", ".join(parts),
                              "FAILED %d" % failed if failed else "all passed", seconds))
