#!/usr/bin/env python3
"""Check every `@ccall` of the Julia bindings against the C header, as clang reads it.

No Julia runtime exists on the build machines, so the ccall signatures are checked mechanically: each C
function of include/xffl.h has exactly one `@ccall libxffl.NAME(...)::RET`; the argument count matches;
each argument type has the C argument's size and kind (Cint for int and enums, Csize_t for size_t,
Cdouble for double, Ptr{T} for `T *` with the right T, Ptr{Ptr{T}} for `T **`, Cstring only for
`const char *`, the opaque Ptr{xffl_state_t}/Ptr{xffl_group_t}/Ptr{xffl_request_t} for handles); the return type matches;
no `@ccall` names a function the header lacks; and every C enum constant is a `const NAME = Cint(value)`
with the header's value. Exit 1 with one line per problem.

Usage: check_ccalls.py [--include DIR] [--sources DIR_OR_FILE ...]
"""
import argparse
import os
import re
import sys
from dataclasses import dataclass
from typing import List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "ledger"))
import c_api  # noqa: E402  (tests/ledger/c_api.py: the header model shared by every check)

LIBRARY_VARIABLE = "libxffl"

# Julia scalar types -> the c_api base kinds.
JULIA_SCALARS = {
    "Cint": "int32", "Int32": "int32",
    "Cuint": "uint32", "UInt32": "uint32",
    "Csize_t": "size_t",
    "Clonglong": "int64", "Int64": "int64",
    "Culonglong": "uint64",
    "Cdouble": "double", "Float64": "double",
    "Cfloat": "float", "Float32": "float",
    "Cchar": "char", "UInt8": "char", "Int8": "char", "Cuchar": "char",
    "Cvoid": "void",
}
OPAQUE = {"xffl_state_t": "struct:xffl_state", "xffl_group_t": "struct:xffl_group", "xffl_request_t": "struct:xffl_request"}


@dataclass
class CCall:
    file: str
    line: int
    library: str
    name: str
    args: List[Tuple[str, str]]  # (argument expression, Julia type text)
    ret: str


def _matching(text: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index just after the bracket closing the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError("unbalanced %s at offset %d" % (open_ch, start))


def _split_top(text: str) -> List[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def _strip_comments(text: str) -> str:
    """Blank out comments and string literals (docstrings mention @ccall too), keeping line numbers."""
    out, i, n = [], 0, len(text)
    blank = lambda chunk: re.sub(r"[^\n]", " ", chunk)
    while i < n:
        if text.startswith("#=", i):
            j = text.find("=#", i + 2)
            j = n if j < 0 else j + 2
        elif text[i] == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            j = n if j < 0 else j + 3
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        elif text[i] == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):  # a Char literal
            j = text.index("'", i + 1 + (text[i + 1] == "\\")) + 1
        else:
            out.append(text[i])
            i += 1
            continue
        out.append(blank(text[i:j]))
        i = j
    return "".join(out)


def parse_ccalls(path: str, text: str) -> Tuple[List[CCall], List[str]]:
    calls, problems = [], []
    code = _strip_comments(text)
    for m in re.finditer(r"@ccall\b", code):
        line = code.count("\n", 0, m.start()) + 1
        where = "%s:%d" % (os.path.relpath(path), line)
        head = re.compile(r"\s*(\$?\(?[\w.]+?\)?)\.(\w+)\s*\(").match(code, m.end())
        if not head:
            problems.append("%s: @ccall not of the form @ccall lib.name(args...)::T" % where)
            continue
        open_at = head.end() - 1
        try:
            close_at = _matching(code, open_at, "(", ")")
        except ValueError as e:
            problems.append("%s: %s" % (where, e))
            continue
        ret = re.compile(r"\s*::\s*([\w{}.]+(?:\{[^}]*\})?)").match(code, close_at)
        if not ret:
            problems.append("%s: @ccall %s has no ::ReturnType" % (where, head.group(2)))
            continue
        inner = code[open_at + 1: close_at - 1]
        if ";" in inner:
            problems.append("%s: @ccall %s is variadic; the C API has no variadic function" % (where, head.group(2)))
            continue
        args = []
        for part in _split_top(inner):
            am = re.match(r"^(.*?)::\s*(.+)$", part, re.S)
            if not am:
                problems.append("%s: @ccall %s: argument %r has no ::Type" % (where, head.group(2), part))
                continue
            args.append((am.group(1).strip(), re.sub(r"\s+", "", am.group(2))))
        calls.append(CCall(path, line, head.group(1), head.group(2), args, re.sub(r"\s+", "", ret.group(1))))
    return calls, problems


def julia_type(text: str) -> Optional[c_api.CType]:
    """A Julia ccall type as a CType; None when it is not one the checker knows."""
    m = re.match(r"^(Ptr|Ref)\{(.+)\}$", text)
    if m:
        inner = julia_type(m.group(2))
        return None if inner is None else c_api.CType(inner.base, inner.depth + 1)
    if text == "Cstring":
        return c_api.CType("char", 1, True)
    if text in OPAQUE:
        return c_api.CType(OPAQUE[text], 0)
    if text in JULIA_SCALARS:
        return c_api.CType(JULIA_SCALARS[text], 0)
    return None


def compatible(jl_text: str, ctype: c_api.CType) -> bool:
    jt = julia_type(jl_text)
    if jt is None:
        return False
    if ctype.base == "fnptr":  # a callback: the Ptr{Cvoid} that @cfunction gives (or C_NULL)
        return jl_text == "Ptr{Cvoid}"
    if jl_text == "Cstring":  # Julia converts a String (NUL-checked); only for strings C will not write to
        return ctype.base == "char" and ctype.depth == 1 and ctype.const_pointee
    return jt.base == ctype.base and jt.depth == ctype.depth


def parse_constants(text: str):
    return {m.group(1): int(m.group(2)) for m in
            re.finditer(r"^\s*const\s+(XFFL_\w+)\s*=\s*Cint\(\s*(-?\d+)\s*\)", _strip_comments(text), re.M)}


def check(api: c_api.CApi, sources: List[Tuple[str, str]]) -> Tuple[List[str], int]:
    problems: List[str] = []
    calls: List[CCall] = []
    constants = {}
    for path, text in sources:
        found, bad = parse_ccalls(path, text)
        calls += found
        problems += bad
        for name, value in parse_constants(text).items():
            if name in constants:
                problems.append("%s: constant %s defined twice" % (os.path.relpath(path), name))
            constants[name] = value
    seen = {}
    for call in calls:
        where = "%s:%d" % (os.path.relpath(call.file), call.line)
        if call.library != LIBRARY_VARIABLE:
            problems.append("%s: @ccall %s uses library %r, expected %s" % (where, call.name, call.library,
                                                                             LIBRARY_VARIABLE))
        if call.name in seen:
            problems.append("%s: second @ccall of %s (first at %s); keep one per C function" % (where, call.name,
                                                                                              seen[call.name]))
            continue
        seen[call.name] = where
        fn = api.functions.get(call.name)
        if fn is None:
            problems.append("%s: @ccall %s: no such function in the C header" % (where, call.name))
            continue
        if len(call.args) != len(fn.params):
            problems.append("%s: @ccall %s has %d arguments, C has %d" % (where, call.name, len(call.args),
                                                                         len(fn.params)))
            continue
        for pos, ((expr, jl), (cname, ctype)) in enumerate(zip(call.args, fn.params), 1):
            if julia_type(jl) is None:
                problems.append("%s: @ccall %s argument %d (%s): unknown Julia type %s" % (where, call.name, pos,
                                                                                         expr, jl))
            elif not compatible(jl, ctype):
                problems.append("%s: @ccall %s argument %d (%s): Julia %s does not match C `%s %s`" % (
                    where, call.name, pos, expr, jl, ctype, cname))
        if julia_type(call.ret) is None or not compatible(call.ret, fn.ret) and not (
                call.ret == "Ptr{UInt8}" and fn.ret.base == "char" and fn.ret.depth == 1):
            problems.append("%s: @ccall %s returns %s, C returns `%s`" % (where, call.name, call.ret, fn.ret))
    for name in sorted(set(api.functions) - set(seen)):
        problems.append("%s: declared in the C header but no @ccall binds it" % name)
    for name, value in sorted(api.constants.items()):
        if name not in constants:
            problems.append("%s: C enum constant has no `const %s = Cint(%d)`" % (name, name, value))
        elif constants[name] != value:
            problems.append("%s: Julia says %d, the C header says %d" % (name, constants[name], value))
    for name in sorted(set(constants) - set(api.constants)):
        problems.append("%s: Julia constant not in the C header" % name)
    return problems, len(seen)


def collect_sources(paths: List[str]) -> List[Tuple[str, str]]:
    out = []
    for p in paths:
        files = [p] if os.path.isfile(p) else sorted(
            os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs if f.endswith(".jl"))
        for f in files:
            with open(f, encoding="utf-8") as handle:
                out.append((f, handle.read()))
    return out


def main(argv=None) -> int:
    root = os.path.abspath(os.path.join(HERE, "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--include", default=os.path.join(root, "include"))
    ap.add_argument("--sources", nargs="+", default=[os.path.join(HERE, "XFFL", "src")])
    args = ap.parse_args(argv)
    api = c_api.load_api(args.include)
    sources = collect_sources(args.sources)
    problems, bound = check(api, sources)
    if not api.functions or bound == 0:
        problems.append("nothing to compare: %d C functions, %d @ccall" % (len(api.functions), bound))
    for p in problems:
        print("check_ccalls: " + p)
    if problems:
        return 1
    print("check_ccalls: %d @ccall and %d constants agree with the C header" % (bound, len(api.constants)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
