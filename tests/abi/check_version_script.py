#!/usr/bin/env python3
"""The linker version script (src/xffl.map) against the public headers and the built library.

  - every node lists its symbols by name: no wildcard in a `global:` list, `local: *;` only;
  - every function declared with XFFL_API in include/xffl/*.h is listed in exactly one node, and
    every listed name is such a function (a new function nobody listed would silently be local);
  - with --library: libxffl.so exports exactly the listed functions, each with its node's version.

Usage: check_version_script.py --map src/xffl.map --include include [--library libxffl.so]
Exit status: 0 consistent, 1 a difference (each one named).
"""
import argparse
import glob
import os
import re
import subprocess
import sys
from typing import Dict, List, Tuple

# The declaration shape the headers use: `XFFL_API <return type> xffl_name(`, possibly over lines.
DECLARATION = re.compile(r"XFFL_API[^;(]*?[\s*](xffl_[a-z0-9_]+)\s*\(")
NODE = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\{(.*?)\}\s*([A-Za-z_][A-Za-z0-9_.]*)?\s*;", re.S)


def declared_functions(include_dir: str) -> Dict[str, str]:
    """Function name -> header, for every XFFL_API function of include_dir/xffl/*.h."""
    found: Dict[str, str] = {}
    headers = sorted(glob.glob(os.path.join(include_dir, "xffl", "*.h")))
    if not headers:
        raise SystemExit("version script: no headers in %s/xffl" % include_dir)
    for header in headers:
        with open(header, encoding="utf-8") as f:
            text = f.read()
        for name in DECLARATION.findall(text):
            found[name] = os.path.basename(header)
    return found


def parse_map(text: str) -> Tuple[List[Tuple[str, List[str], List[str]]], List[str]]:
    """Nodes as (version, global names, local patterns), and the problems seen while reading them."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"#[^\n]*", " ", text)
    nodes, problems = [], []
    for match in NODE.finditer(text):
        version, body = match.group(1), match.group(2)
        section, globals_, locals_ = "global", [], []
        for item in re.split(r"[;\s]+", body):
            if not item:
                continue
            if item in ("global:", "local:"):
                section = item[:-1]
                continue
            (globals_ if section == "global" else locals_).append(item)
        nodes.append((version, globals_, locals_))
    leftover = NODE.sub(" ", text).strip()
    if leftover:
        problems.append("text outside any version node: %r" % leftover[:80])
    if not nodes:
        problems.append("no version node found")
    return nodes, problems


def check(map_text: str, declared: Dict[str, str]) -> Tuple[List[str], Dict[str, str]]:
    """Problems of the map against the declared functions, and name -> version of the listed ones."""
    nodes, problems = parse_map(map_text)
    version_of: Dict[str, str] = {}
    for version, globals_, locals_ in nodes:
        for pattern in locals_:
            if pattern != "*":
                problems.append("node %s: local pattern '%s' (only 'local: *;' is expected)" % (version, pattern))
        for name in globals_:
            if any(c in name for c in "*?[]"):
                problems.append("node %s: wildcard '%s'; list every symbol by name" % (version, name))
            elif name in version_of:
                problems.append("%s is listed in node %s and again in node %s" % (name, version_of[name], version))
            else:
                version_of[name] = version
            if name not in declared and not any(c in name for c in "*?[]"):
                problems.append("node %s lists %s, which no header of include/xffl declares with XFFL_API"
                                % (version, name))
    for name in sorted(declared):
        if name not in version_of:
            problems.append("%s (declared in %s) is in no node of the version script: add it to the newest "
                            "node of src/xffl.map, or it is not exported" % (name, declared[name]))
    return problems, version_of


def exported_versions(library: str) -> Dict[str, str]:
    """Defined dynamic xffl_ symbols of the library -> their version (nm -D prints NAME@@VERSION)."""
    run = subprocess.run(["nm", "-D", "--defined-only", library], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        raise SystemExit("version script: nm -D failed on %s: %s" % (library, run.stderr.strip()))
    exported: Dict[str, str] = {}
    for line in run.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] != "A":  # A: the version nodes' own names
            name, _, version = parts[2].partition("@")
            exported[name] = version.lstrip("@")
    return exported


def check_library(library: str, version_of: Dict[str, str]) -> List[str]:
    problems = []
    exported = exported_versions(library)
    for name, version in sorted(exported.items()):
        if name not in version_of:
            problems.append("%s exports %s, which the version script does not list" % (library, name))
        elif version != version_of[name]:
            problems.append("%s exports %s with version '%s', the script says %s"
                            % (library, name, version, version_of[name]))
    for name in sorted(set(version_of) - set(exported)):
        problems.append("%s does not export %s (listed in node %s)" % (library, name, version_of[name]))
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--map", required=True)
    parser.add_argument("--include", required=True)
    parser.add_argument("--library")
    args = parser.parse_args()
    with open(args.map, encoding="utf-8") as f:
        map_text = f.read()
    declared = declared_functions(args.include)
    problems, version_of = check(map_text, declared)
    if args.library and not problems:
        problems = check_library(args.library, version_of)
    for problem in problems:
        print("version script: FAIL: " + problem, file=sys.stderr)
    if problems:
        return 1
    nodes = sorted(set(version_of.values()))
    print("version script: OK: %d functions, each in one node (%s)%s"
          % (len(version_of), ", ".join(nodes), ", exported as listed" if args.library else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
