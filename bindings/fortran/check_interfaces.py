#!/usr/bin/env python3
"""Check the Fortran bindings against the C header, as clang reads it.

For every `bind(C, name="xffl_...")` interface of bindings/fortran/src/xffl_c.f90: the C function exists,
the argument count matches, and each dummy argument passes what C expects (integer(c_int) value for
int and enums, integer(c_size_t) value for size_t, integer(c_int)/integer(c_size_t)/real(c_double) by
reference for `T *`, character(kind=c_char) arrays for `char *`, type(c_ptr) value for any pointer,
type(c_ptr) by reference for `T **`), and the result matches the C return type. Every C function must
have an interface, every C enum constant an `integer(c_int), parameter` with the same value, and module
xffl must make every constant public. Exit 1 with one line per problem.

Usage: check_interfaces.py [--include DIR] [--fortran FILE_OF_xffl_c] [--module FILE_OF_xffl]
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "ledger"))
import c_api  # noqa: E402  (tests/ledger/c_api.py: the header model shared by every check)

# Fortran declaration -> the C argument kinds it can pass. (type, by_value) -> predicate on CType.
def _accepts(ftype: str, by_value: bool, is_array: bool, ctype: "c_api.CType") -> bool:
    if ftype == "integer(c_int)":
        return (ctype.base == "int32" and ctype.depth == 0) if by_value else \
               (ctype.base == "int32" and ctype.depth == 1)
    if ftype == "integer(c_size_t)":
        return (ctype.base == "size_t" and ctype.depth == 0) if by_value else \
               (ctype.base == "size_t" and ctype.depth == 1)
    if ftype == "real(c_double)":
        return (ctype.base == "double" and ctype.depth == 0) if by_value else \
               (ctype.base == "double" and ctype.depth == 1)
    if ftype == "real(c_float)":
        return (ctype.base == "float" and ctype.depth == 0) if by_value else \
               (ctype.base == "float" and ctype.depth == 1)
    if ftype == "character(kind=c_char)":
        return not by_value and is_array and ctype.base == "char" and ctype.depth == 1
    if ftype == "type(c_funptr)":
        # a callback (c_funloc of a bind(C) procedure), passed as the code address itself
        return by_value and ctype.base == "fnptr" and ctype.depth == 0
    if ftype == "type(c_ptr)":
        # by value: the pointer itself (T *); by reference: the address of a c_ptr or of an array of them (T **)
        return ctype.depth == 1 if by_value else ctype.depth == 2
    return False


def _result_ok(ftype, ctype) -> bool:
    if ftype is None:
        return ctype.base == "void" and ctype.depth == 0
    if ftype == "type(c_ptr)":
        return ctype.depth >= 1
    return _accepts(ftype, True, False, ctype)


def _logical_lines(text: str):
    """Fortran free-form lines with comments removed and '&' continuations joined."""
    out, pending = [], ""
    for raw in text.splitlines():
        line = re.sub(r"!.*$", "", raw).rstrip()  # no '!' inside strings in this file
        if not line.strip():
            continue
        stripped = line.strip()
        if stripped.startswith("&"):
            stripped = stripped[1:]
        if stripped.endswith("&"):
            pending += stripped[:-1] + " "
            continue
        out.append((pending + stripped).strip())
        pending = ""
    return out


def parse_interfaces(text: str):
    """bind name -> {"procedure", "args": [names], "decls": {name: (type, attrs, is_array)}, "result"}."""
    interfaces = {}
    current = None
    head = re.compile(r'^(function|subroutine)\s+(\w+)\s*\(([^)]*)\)\s*bind\s*\(\s*C\s*,\s*name\s*=\s*"(\w+)"\s*\)'
                      r'(?:\s*result\s*\(\s*(\w+)\s*\))?', re.I)
    for line in _logical_lines(text):
        m = head.match(line)
        if m:
            kind, proc, args, bind_name, result = m.groups()
            if kind.lower() == "function" and not result:
                result = proc
            current = {"procedure": proc, "kind": kind.lower(), "bind": bind_name,
                       "args": [a.strip().lower() for a in args.split(",") if a.strip()],
                       "result_name": result.lower() if result else None, "decls": {}}
            if bind_name in interfaces:
                raise SystemExit("check_interfaces: %s is bound twice" % bind_name)
            interfaces[bind_name] = current
            continue
        if current is None:
            continue
        if re.match(r"^end\s+(function|subroutine)", line, re.I):
            current = None
            continue
        d = re.match(r"^(integer\s*\(\s*\w+\s*\)|real\s*\(\s*\w+\s*\)|type\s*\(\s*\w+\s*\)|"
                     r"character\s*\(\s*kind\s*=\s*\w+\s*\))\s*((?:,\s*[^:]+?)*)\s*::\s*(.+)$", line, re.I)
        if d:
            ftype = re.sub(r"\s+", "", d.group(1)).lower()
            attrs = [a.strip().lower() for a in d.group(2).split(",") if a.strip()]
            for entity in re.findall(r"(\w+)\s*(\([^)]*\))?", d.group(3)):
                name, dims = entity[0].lower(), entity[1]
                current["decls"][name] = (ftype, attrs, bool(dims) or any(a.startswith("dimension") for a in attrs))
    return interfaces


def parse_constants(text: str):
    return {m.group(1): int(m.group(2)) for m in
            re.finditer(r"integer\(c_int\),\s*parameter,\s*public\s*::\s*(XFFL_\w+)\s*=\s*(-?\d+)", text)}


def check(api, fortran_text: str, module_text: str):
    problems = []
    interfaces = parse_interfaces(fortran_text)
    for name in sorted(set(api.functions) - set(interfaces)):
        problems.append("%s: declared in the C header but has no bind(C) interface in xffl_c" % name)
    for name, itf in sorted(interfaces.items()):
        fn = api.functions.get(name)
        if fn is None:
            problems.append("%s: bound in Fortran but not declared in the C header" % name)
            continue
        if itf["procedure"].lower() != name.lower():
            problems.append("%s: Fortran procedure is named %s; keep the C name" % (name, itf["procedure"]))
        if len(itf["args"]) != len(fn.params):
            problems.append("%s: %d arguments in Fortran, %d in C" % (name, len(itf["args"]), len(fn.params)))
            continue
        for pos, (arg, (cname, ctype)) in enumerate(zip(itf["args"], fn.params), 1):
            decl = itf["decls"].get(arg)
            if decl is None:
                problems.append("%s: argument %d (%s) has no declaration" % (name, pos, arg))
                continue
            ftype, attrs, is_array = decl
            by_value = "value" in attrs
            if not _accepts(ftype, by_value, is_array, ctype):
                problems.append("%s: argument %d (%s): Fortran %s%s%s cannot pass C `%s %s`" % (
                    name, pos, arg, ftype, ", value" if by_value else " by reference",
                    " array" if is_array else "", ctype, cname))
            if "optional" in attrs and by_value:
                problems.append("%s: argument %d (%s): optional with value cannot mean NULL" % (name, pos, arg))
        if itf["kind"] == "subroutine":
            if not _result_ok(None, fn.ret):
                problems.append("%s: a subroutine in Fortran but C returns `%s`" % (name, fn.ret))
        else:
            decl = itf["decls"].get(itf["result_name"])
            if decl is None:
                problems.append("%s: function result %s has no declaration" % (name, itf["result_name"]))
            elif not _result_ok(decl[0], fn.ret):
                problems.append("%s: Fortran result %s, C returns `%s`" % (name, decl[0], fn.ret))
    constants = parse_constants(fortran_text)
    for cname, value in sorted(api.constants.items()):
        if cname not in constants:
            problems.append("%s: C enum constant missing from xffl_c" % cname)
        elif constants[cname] != value:
            problems.append("%s: xffl_c says %d, the C header says %d" % (cname, constants[cname], value))
    for cname in sorted(set(constants) - set(api.constants)):
        problems.append("%s: constant in xffl_c but not in the C header" % cname)
    public = set(re.findall(r"\bXFFL_\w+", " ".join(
        line for line in _logical_lines(module_text) if re.match(r"^public\s*::", line, re.I))))
    for cname in sorted(set(api.constants) - public):
        problems.append("%s: not made public by module xffl" % cname)
    return problems, interfaces


def main(argv=None):
    root = os.path.abspath(os.path.join(HERE, "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--include", default=os.path.join(root, "include"))
    ap.add_argument("--fortran", default=os.path.join(HERE, "src", "xffl_c.f90"))
    ap.add_argument("--module", default=os.path.join(HERE, "src", "xffl.f90"))
    args = ap.parse_args(argv)
    api = c_api.load_api(args.include)
    with open(args.fortran, encoding="utf-8") as f:
        fortran_text = f.read()
    with open(args.module, encoding="utf-8") as f:
        module_text = f.read()
    problems, interfaces = check(api, fortran_text, module_text)
    if not api.functions or not interfaces:
        problems.append("nothing to compare: %d C functions, %d Fortran interfaces" % (len(api.functions),
                                                                                   len(interfaces)))
    for p in problems:
        print("check_interfaces: " + p)
    if problems:
        return 1
    print("check_interfaces: %d functions and %d constants agree with the C header" % (
        len(interfaces), len(api.constants)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
