#!/usr/bin/env python3
"""Prints an anchored CTest regular expression that matches exactly the tests of a selection.

    test-names.py TESTS_JSON

TESTS_JSON is `ctest --preset NAME --show-only=json-v1`. test-all.sh gives the result to the ci stage's
`ctest -E`, so that the ci stage leaves out the tests that the asan stage runs (see test-all.sh).
Exits 1, printing nothing, when the selection is empty or unreadable: the caller then leaves nothing out.
"""
import json
import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: test-names.py TESTS_JSON")
    try:
        with open(sys.argv[1]) as f:
            names = [test["name"] for test in json.load(f)["tests"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"test-names: {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    if not names:
        return 1
    # CTest's regular expressions know \. and the other escapes re.escape writes for test names.
    print("^(" + "|".join(re.escape(name) for name in sorted(names)) + ")$")
    return 0


if __name__ == "__main__":
    sys.exit(main())
