#!/usr/bin/env python3
"""The names of a selection of tests, for test-all.sh's split between its ci and asan stages.

    test-names.py TESTS_JSON                    an anchored CTest regular expression matching exactly them
    test-names.py TESTS_JSON --not-in LOG...    those that no ctest log names as run (one per line)

TESTS_JSON is `ctest --preset NAME --show-only=json-v1`. test-all.sh gives the expression to the ci stage's
`ctest -E`, so that the ci stage leaves out the tests that the asan stage runs; at the end it checks with
--not-in that every test of the ci stage's whole selection ran in one of the two stages.
Exits 1 when the selection is empty or unreadable (printing nothing: the caller then leaves nothing out),
or, with --not-in, when a test did not run.
"""
import json
import re
import sys


def ran_in(logs):
    """Names that ctest logs report as run: '  3/104 Test  #24: NAME ....... Passed' (or Failed, Timeout)."""
    ran = set()
    for log in logs:
        try:
            with open(log, errors="replace") as f:
                ran.update(m.group(1) for m in re.finditer(r"Test +#\d+: (\S+) ", f.read()))
        except OSError:
            pass  # a stage that did not get to its tests has no log: its tests did not run
    return ran


def main():
    if len(sys.argv) < 2 or (len(sys.argv) > 2 and sys.argv[2] != "--not-in"):
        sys.exit("usage: test-names.py TESTS_JSON [--not-in LOG...]")
    try:
        with open(sys.argv[1]) as f:
            names = [test["name"] for test in json.load(f)["tests"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"test-names: {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    if not names:
        return 1
    if len(sys.argv) > 2:
        missing = sorted(set(names) - ran_in(sys.argv[3:]))
        for name in missing:
            print(name)
        return 1 if missing else 0
    # CTest's regular expressions know \. and the other escapes re.escape writes for test names.
    print("^(" + "|".join(re.escape(name) for name in sorted(names)) + ")$")
    return 0


if __name__ == "__main__":
    sys.exit(main())
