#!/usr/bin/env python3
"""Static rules of the Julia package that no ccall check sees (no Julia runs on these machines):

1. Nothing exported by module XFFL clashes with a name that Base, a standard library or a common
   package exports (CLASHES below: `rank` of LinearAlgebra, `stream` of CUDA.jl, `describe` of
   DataFrames, `mesh` of Makie, ...). Such names stay qualified (XFFL.rank), as MPI.jl does.
2. Every exported name is defined in src/XFFL.jl (a function, a struct, a const, or a name of the
   `for (fname, attr) in ((:name, ...` getter loop).
3. LibXFFL's XFFL_UUID (the key of the package's preferences) is the uuid of Project.toml.
4. test/runtests.jl runs offline: no `Pkg`, no `instantiate`; Project.toml's [deps] are standard
   libraries only; bindings/julia/XFFL/.gitignore ignores Manifest.toml.
Exit 1 with one line per broken rule.

Usage: check_package.py [--package DIR]
"""
import argparse
import os
import re
import sys
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> who exports it. Base's own exports are not listed: defining one of them in XFFL would
# shadow Base inside XFFL, which Julia already warns about.
CLASHES: Dict[str, str] = {
    "rank": "LinearAlgebra", "norm": "LinearAlgebra", "dot": "LinearAlgebra", "det": "LinearAlgebra",
    "mean": "Statistics", "std": "Statistics", "var": "Statistics", "median": "Statistics",
    "describe": "DataFrames / StatsBase", "groupby": "DataFrames", "combine": "DataFrames",
    "select": "DataFrames", "transform": "DataFrames", "nrow": "DataFrames", "ncol": "DataFrames",
    "mesh": "Makie", "scatter": "Makie / Plots", "lines": "Makie", "surface": "Makie / Plots",
    "plot": "Plots / Makie",
    "stream": "CUDA.jl", "device": "CUDA.jl", "synchronize": "CUDA.jl", "context": "CUDA.jl",
    "workers": "Distributed", "myid": "Distributed", "nprocs": "Distributed", "procs": "Distributed",
    "version": "Pkg", "status": "Pkg",
    "comm": "MPI.jl (Comm)", "reduce": "Base", "broadcast!": "Base", "size": "Base", "length": "Base",
}

# Standard libraries a package may depend on without a registry (uuid -> name).
STDLIBS = {
    "8f399da3-3557-5675-b5ff-fb832c97cbdb": "Libdl",
    "8dfd0a4f-a0a4-4d10-85cd-bd5ab4a3da2f": "Test",
    "37e2e46d-f89d-539d-b4ee-838fcccc9c8e": "LinearAlgebra",
    "de0858da-6303-5e67-8744-51eddeeeb8d7": "Printf",
    "9a3f8284-a2c9-5f02-9a11-845980a1fd5c": "Random",
}


def strip_comments(text: str) -> str:
    text = re.sub(r"#=.*?=#", "", text, flags=re.S)
    text = re.sub(r'"""(?:.|\n)*?"""', '""', text)
    return re.sub(r"#[^\n]*", "", text)


def exported(code: str) -> List[str]:
    names = []
    for m in re.finditer(r"^\s*export\s+(.+)$", code, re.M):
        names += [n.strip() for n in m.group(1).split(",") if n.strip()]
    return names


def defined(code: str, name: str) -> bool:
    n = re.escape(name)
    patterns = [
        r"^\s*function\s+%s\s*[({]" % n,                     # function name( / name{T}(
        r"^%s\s*\(" % n,                                       # name(args...) = ... at top level
        r"^\s*(mutable\s+)?struct\s+%s\b" % n,
        r"^\s*const\s+%s\s*=" % n,
        r"\(\s*:%s\s*," % n,                                    # the @eval getter loop
    ]
    return any(re.search(p, code, re.M) for p in patterns)


def check(package: str) -> List[str]:
    problems = []
    src = os.path.join(package, "src", "XFFL.jl")
    lib = os.path.join(package, "src", "LibXFFL.jl")
    with open(src, encoding="utf-8") as f:
        code = strip_comments(f.read())
    names = exported(code)
    if not names:
        problems.append("%s: no export found" % src)
    for name in names:
        if name in CLASHES:
            problems.append("XFFL exports `%s`, which %s exports too: keep it qualified (XFFL.%s)" % (
                name, CLASHES[name], name))
        if not defined(code, name):
            problems.append("XFFL exports `%s` but src/XFFL.jl does not define it" % name)

    with open(os.path.join(package, "Project.toml"), encoding="utf-8") as f:
        project = f.read()
    uuid = re.search(r'^uuid\s*=\s*"([0-9a-f-]+)"', project, re.M)
    with open(lib, encoding="utf-8") as f:
        lib_code = f.read()
    lib_uuid = re.search(r'XFFL_UUID\s*=\s*Base\.UUID\("([0-9a-f-]+)"\)', lib_code)
    if not uuid or not lib_uuid or uuid.group(1) != lib_uuid.group(1):
        problems.append("LibXFFL.XFFL_UUID (%s) is not Project.toml's uuid (%s): preferences would be read "
                        "for another package" % (lib_uuid and lib_uuid.group(1), uuid and uuid.group(1)))
    deps = re.search(r"^\[deps\]\n((?:[^\[\n][^\n]*\n?)*)", project, re.M)
    for line in (deps.group(1).splitlines() if deps else []):
        m = re.match(r'\s*(\w+)\s*=\s*"([0-9a-f-]+)"', line)
        if m and m.group(2) not in STDLIBS:
            problems.append("Project.toml depends on %s, not a standard library: the tests could not run "
                            "offline without Pkg.instantiate" % m.group(1))

    runtests = os.path.join(package, "test", "runtests.jl")
    with open(runtests, encoding="utf-8") as f:
        tests = strip_comments(f.read())
    if re.search(r"\busing\s+Pkg\b|\bimport\s+Pkg\b|\binstantiate\b", tests):
        problems.append("test/runtests.jl uses Pkg: it must run offline, without Pkg.instantiate")
    ignore = os.path.join(package, ".gitignore")
    ignored = open(ignore, encoding="utf-8").read().split("\n") if os.path.isfile(ignore) else []
    if "Manifest.toml" not in [line.strip() for line in ignored]:
        problems.append("%s does not ignore Manifest.toml" % ignore)
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--package", default=os.path.join(HERE, "XFFL"))
    args = ap.parse_args(argv)
    problems = check(args.package)
    for p in problems:
        print("check_package: " + p)
    if problems:
        return 1
    print("check_package: exports, preferences key, offline tests and .gitignore are as they should be")
    return 0


if __name__ == "__main__":
    sys.exit(main())
