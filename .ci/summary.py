#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Helpers of .ci/run for a build directory's last `meson test` runs (meson-logs/testlog.json,
# and the testlog-*.json copies .ci/run keeps):
#   summary.py line NAME SECONDS LOG [LOG...]  one line of counts per suite (a later log's
#                                             result for a test replaces an earlier one's)
#   summary.py qemu-crashed LOG               the names of the failed tests, if every failure
#                                             is qemu itself dying on an internal assertion
#                                             (its message names qemu's sources); exit 1 if
#                                             any failure is something else, or none failed
#   summary.py failures LOG [LINES]           each failed test's failing TAP points, bail-outs
#                                             and the last LINES (40) lines of its output:
#                                             printed again at the end of a failed run, where
#                                             a log cut to its tail still shows them
import json
import os
import re
import sys

QEMU_CRASH = re.compile(r"ERROR:\.\./\.\./(target|accel|linux-user|tcg|plugins|util)/|"
                        r"^qemu-[a-z0-9]+: .*Assertion", re.M)


def results(path):
    out = {}
    for line in open(path):
        t = json.loads(line)
        out[t["name"]] = t
    return out


def line(name, seconds, logs):
    merged, reruns = {}, 0
    for log in logs:
        r = results(log)
        if "rerun" in os.path.basename(log):  # testlog-rerunN.json: after a qemu crash
            reruns += len(r)
        merged.update(r)
    suites = {}
    for full, t in merged.items():
        suite = full.split(":", 1)[1].split(" / ", 1)[0].strip()
        c = suites.setdefault(suite, {"passed": 0, "failed": 0, "skipped": 0})
        r = t["result"]
        key = "passed" if r in ("OK", "EXPECTEDFAIL") else "skipped" if r == "SKIP" else "failed"
        c[key] += 1
    parts = ["%s %d/%d%s" % (s, c["passed"], c["passed"] + c["failed"],
                             " (%d skipped)" % c["skipped"] if c["skipped"] else "")
             for s, c in sorted(suites.items())]
    failed = sum(c["failed"] for c in suites.values())
    print("%-24s %s; %s%s; %s s" % (name + ":", ", ".join(parts),
                                    "FAILED %d" % failed if failed else "all passed",
                                    "; %d run again after qemu crashed" % reruns if reruns else "",
                                    seconds))


def qemu_crashed(log):
    failed = [t for t in results(log).values() if t["result"] not in ("OK", "EXPECTEDFAIL", "SKIP")]
    if not failed or not all(QEMU_CRASH.search(t.get("stdout", "") + t.get("stderr", "")) for t in failed):
        return 1
    print(" ".join(t["name"].split(" / ", 1)[1] for t in failed))
    return 0


def failures(log, lines):
    failed = [t for t in results(log).values() if t["result"] not in ("OK", "EXPECTEDFAIL", "SKIP")]
    if not failed:
        print("no test failed in %s" % log)
    for t in failed:
        out = (t.get("stdout") or "") + (t.get("stderr") or "")
        marks = [s for s in out.splitlines() if s.startswith(("not ok", "Bail out!"))]
        print("--- %s: %s; seed, failing points, then its last %d lines:" % (t["name"], t["result"], lines))
        print("\n".join([s for s in out.splitlines() if s.startswith("# seed")][:1] + marks))
        print("\n".join(out.splitlines()[-lines:]))


if __name__ == "__main__":
    if sys.argv[1] == "line":
        line(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif sys.argv[1] == "qemu-crashed":
        sys.exit(qemu_crashed(sys.argv[2]))
    elif sys.argv[1] == "failures":
        failures(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 40)
    else:
        sys.exit("usage: summary.py line NAME SECONDS LOG... | qemu-crashed LOG | failures LOG [LINES]")
