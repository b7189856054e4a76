"""Counts test cases from Bazel's test.xml reports and prints "N passed, N failed".

A test target whose report is missing or holds no test case (a crash, a timeout, a plain
binary test) counts as one case, passed or failed by Bazel's verdict in the log.
Usage: count_tests.py BAZEL_TESTLOGS_DIR BAZEL_LOG [BAZEL_TESTLOGS_DIR BAZEL_LOG ...]
(one pair per `bazel test` run, e.g. the default and the asan configuration; counts add up).
Exit status: 0 when nothing failed, 1 otherwise.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET


def target_verdicts(log_path):
    verdicts = {}
    pattern = re.compile(r"^(//\S+)\s+(?:\(cached\)\s+)?(PASSED|FAILED|TIMEOUT|NO STATUS|FLAKY|"
                         r"FAILED TO BUILD|SKIPPED)")
    with open(log_path, errors="replace") as f:
        for line in f:
            m = pattern.match(line.strip())
            if m:
                verdicts[m.group(1)] = m.group(2)
    return verdicts


def cases_in(xml_path):
    passed = failed = 0
    try:
        root = ET.parse(xml_path).getroot()
    except (ET.ParseError, OSError):
        return None
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.get("status", "run") == "notrun" or case.find("skipped") is not None:
            continue
        else:
            passed += 1
    return passed, failed


def count_run(testlogs, log_path):
    verdicts = target_verdicts(log_path)
    passed = failed = 0
    for target, verdict in sorted(verdicts.items()):
        rel = target[2:].replace(":", "/")
        counts = None
        # Sharded tests write one report per shard.
        xmls = []
        base = os.path.join(testlogs, rel)
        if os.path.isfile(os.path.join(base, "test.xml")):
            xmls.append(os.path.join(base, "test.xml"))
        if os.path.isdir(base):
            for name in sorted(os.listdir(base)):
                shard = os.path.join(base, name, "test.xml")
                if name.startswith("shard_") and os.path.isfile(shard):
                    xmls.append(shard)
        if verdict in ("PASSED", "FAILED", "FLAKY") and xmls:
            p = f = 0
            for x in xmls:
                c = cases_in(x)
                if c:
                    p += c[0]
                    f += c[1]
            if p + f > 0:
                counts = (p, f)
                if verdict == "FAILED" and f == 0:
                    counts = (p, 1)  # the binary failed outside any test case
        if counts is None:
            counts = (1, 0) if verdict in ("PASSED", "FLAKY") else (0, 1)
        passed += counts[0]
        failed += counts[1]
    return passed, failed


def main():
    args = sys.argv[1:]
    if len(args) < 2 or len(args) % 2:
        sys.exit("usage: count_tests.py TESTLOGS LOG [TESTLOGS LOG ...]")
    passed = failed = 0
    for i in range(0, len(args), 2):
        p, f = count_run(args[i], args[i + 1])
        passed += p
        failed += f
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
