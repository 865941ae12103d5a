#!/usr/bin/env python3
"""Rules on src/ that keep one place for each thing (issue "Seams for what comes next").

usage: check_source_rules.py SRC_DIR TYPES_H LIBXFFL XFFL_RUN
- every field name of the state (the keys of xffl_state_describe's JSON and the XFFL_ATTR_ names) is
  written as a string literal once in src/: in the field table, state/fields.cpp;
- every XFFL_* variable of the registry (xffl-run --help-env=markdown) is written as a string literal
  once in src/: in the registry, bootstrap/env_registry.cpp;
- the process environment (getenv, environ) is read in one file, common/environment.cpp.
Exit 0 pass, 1 fail with every violation listed.
"""
import ctypes
import json
import pathlib
import re
import subprocess
import sys

SRC, TYPES_H, LIB, XFFL_RUN = map(pathlib.Path, sys.argv[1:5])

# Literals that spell a field name but name something else, by the shape of their line:
# the name of a C function's parameter in its NULL check, and a group kind's name in messages.
NOT_A_FIELD = [re.compile(r'require_arg\((\w+), "\1"\)'), re.compile(r'case XFFL_GROUP_\w+: return "\w+";')]
# XFFL_* literals outside the registry that are not a read: parse_log_level's default message name.
NOT_A_READ = {("XFFL_LOG_LEVEL", "common/log.h")}


def sources():
    for path in sorted(SRC.rglob("*")):
        if path.suffix in (".h", ".cpp"):
            yield path.relative_to(SRC).as_posix(), path.read_text()


def field_names():
    lib = ctypes.CDLL(str(LIB))
    st = ctypes.c_void_p()
    assert lib.xffl_state_create(ctypes.byref(st)) == 0
    buf, length = ctypes.create_string_buffer(1 << 16), ctypes.c_size_t()
    assert lib.xffl_state_describe(st, 1, buf, ctypes.c_size_t(len(buf)), ctypes.byref(length)) == 0  # JSON
    lib.xffl_state_destroy(st)
    names = set(json.loads(buf.value.decode()))
    names |= {m.lower() for m in re.findall(r"\bXFFL_ATTR_(\w+)\s*=", TYPES_H.read_text())}
    return names


def variable_names():
    table = subprocess.run([str(XFFL_RUN), "--help-env=markdown"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"^\| `(XFFL_\w+)` \|", table, re.M))


def code_only(text):
    """The text without comments and string literals (enough for C++ written in this house style)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)


def main():
    files = dict(sources())
    problems = []

    def literal_places(name, skip=()):
        places = []
        for path, text in files.items():
            for number, line in enumerate(text.splitlines(), 1):
                if f'"{name}"' in line and not any(p.search(line) for p in skip):
                    places.append(f"{path}:{number}")
        return places

    fields = field_names()
    if len(fields) < 25:
        problems.append(f"only {len(fields)} field names found: {sorted(fields)}")
    for name in sorted(fields):
        places = literal_places(name, NOT_A_FIELD)
        if places != [p for p in places if p.startswith("state/fields.cpp:")] or len(places) != 1:
            problems.append(f'field "{name}" is written {len(places)} times, not once in state/fields.cpp: {places}')

    variables = variable_names()
    if len(variables) < 15:
        problems.append(f"only {len(variables)} variables found in xffl-run --help-env=markdown")
    for name in sorted(variables):
        places = [p for p in literal_places(name) if (name, p.split(":")[0]) not in NOT_A_READ]
        if len(places) != 1 or not places[0].startswith("bootstrap/env_registry.cpp:"):
            problems.append(f'variable "{name}" is written {len(places)} times, not once in the registry: {places}')

    readers = sorted(path for path, text in files.items()
                     if re.search(r"getenv\s*\(|\benviron\b", code_only(text)))
    if readers != ["common/environment.cpp"]:
        problems.append(f"the process environment is read in {readers}, not only in common/environment.cpp")

    for problem in problems:
        print(problem)
    print(f"{len(fields)} field names, {len(variables)} variables, environment read in {readers}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
