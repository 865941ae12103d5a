#!/usr/bin/env python3
"""Fails when a test of a stage names a program of the build that the stage did not build.

    check-test-programs.py BUILD_DIR TESTS_JSON

TESTS_JSON is `ctest --preset NAME --show-only=json-v1` (the stage's own selection of tests), BUILD_DIR
build/NAME. A build preset may list "targets" (the tsan and fuzz presets build only what their tests
run): a test whose own executable is missing is already ctest's failure ("Not Run"), but a program
passed to a test as an argument (xffl-run's rank program, the federation server, a checker) would only
make that test fail in its own words, or worse, skip. For such a preset, every path into BUILD_DIR
that a selected test names (in its command, or in a property such as ENVIRONMENT) and that is the
artifact of a CMake target must exist. The targets and their artifacts come from CMake's file API
(the codemodel-v2 query that test-all.sh places before configuring). A preset that builds `all` is
not checked that way: what `all` leaves out (EXCLUDE_FROM_ALL) is built by its own test
(headertest.link.*), and the file API does not say which targets those are.
"""
import glob
import json
import os
import re
import sys


def artifacts_of(build_dir):
    """{absolute artifact path: target name} from the file API's codemodel-v2 reply."""
    reply = os.path.join(build_dir, ".cmake", "api", "v1", "reply")
    indexes = sorted(glob.glob(os.path.join(reply, "index-*.json")))
    if not indexes:
        sys.exit(f"check-test-programs: no CMake file API reply in {reply} (was the codemodel-v2 query placed "
                 "before configuring?)")
    with open(indexes[-1]) as f:
        index = json.load(f)
    codemodel = next((o for o in index["objects"] if o["kind"] == "codemodel"), None)
    if codemodel is None:
        sys.exit(f"check-test-programs: the file API reply in {reply} has no codemodel")
    with open(os.path.join(reply, codemodel["jsonFile"])) as f:
        model = json.load(f)
    out = {}
    for configuration in model["configurations"]:
        for entry in configuration["targets"]:
            with open(os.path.join(reply, entry["jsonFile"])) as f:
                target = json.load(f)
            for artifact in target.get("artifacts", []):
                path = artifact["path"]
                if not os.path.isabs(path):
                    path = os.path.join(build_dir, path)
                out[os.path.realpath(path)] = target["name"]
    return out


def preset_targets(build_dir):
    """The "targets" of the build preset named like BUILD_DIR (build/NAME), or None: it builds `all`."""
    presets = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "CMakePresets.json")
    with open(presets) as f:
        build_presets = json.load(f).get("buildPresets", [])
    name = os.path.basename(build_dir)
    preset = next((p for p in build_presets if p["name"] == name), None)
    return preset.get("targets") if preset else None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check-test-programs.py BUILD_DIR TESTS_JSON")
    build_dir = os.path.realpath(sys.argv[1])
    artifacts = artifacts_of(build_dir) if preset_targets(build_dir) else {}
    with open(sys.argv[2]) as f:
        tests = json.load(f)["tests"]
    problems = []
    for test in tests:
        if not test.get("command"):
            problems.append(f"{test['name']}: its executable was not found (ctest names it when it runs)")
        words = [str(w) for w in test.get("command", [])]
        for prop in test.get("properties", []):
            value = prop["value"]
            words += [str(v) for v in value] if isinstance(value, list) else [str(value)]
        for word in words:
            for part in re.split(r"[\s=;:,'\"]", word):
                if not part.startswith(build_dir + "/"):
                    continue
                path = os.path.realpath(part)
                if path in artifacts and not os.path.exists(path):
                    problems.append(f"{test['name']}: needs {os.path.relpath(path, build_dir)}, of target "
                                    f"{artifacts[path]}, which this stage did not build (add the target to the "
                                    "build preset's targets)")
    for problem in problems:
        print(f"check-test-programs: {problem}", file=sys.stderr)
    if problems:
        return 1
    if artifacts:
        print(f"check-test-programs: every program that the {len(tests)} tests name is built")
    else:
        print(f"check-test-programs: the executable of each of the {len(tests)} tests is built")
    return 0


if __name__ == "__main__":
    sys.exit(main())
