#!/usr/bin/env python3
"""The symbol ledger: every exported `xffl_` symbol of libxffl.so is declared in include/xffl/*.h and bound
in every language, or listed in tests/ledger/not-bound.txt with the reason; and nothing is bound or
declared that the library does not export.

Languages (how a symbol counts as bound):
  rust         `pub fn NAME(` in bindings/rust/xffl-sys/src/bindings.rs (the committed bindgen output)
  rust-safe    NAME used by the safe crate, bindings/rust/xffl/src/**/*.rs
  fortran      `bind(C, name="NAME")` in bindings/fortran/src/*.f90 (module xffl_c)
  fortran-api  NAME called by module xffl (bindings/fortran/src/xffl.f90)
  julia        `@ccall libxffl.NAME(` in bindings/julia/XFFL/src/*.jl (module LibXFFL)
  julia-api    `L.NAME(` called by the idiomatic layer (bindings/julia/XFFL/src/XFFL.jl)
The Rust languages are checked once bindings/rust exists; until then the ledger says they are skipped.

not-bound.txt: one `SYMBOL LANGUAGE REASON...` per line, # comments. An entry for a symbol that is
bound after all, or that the library does not export, is an error too: the ledger stays true.

Usage: ledger.py --library path/to/libxffl.so [--root REPO] [--print]
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
from typing import Dict, List, Optional, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import c_api  # noqa: E402

LANGUAGES = ["rust", "rust-safe", "fortran", "fortran-api", "julia", "julia-api"]


def exported_symbols(library: str) -> Set[str]:
    nm = shutil.which("nm")
    if not nm:
        raise SystemExit("ledger: nm not found (binutils)")
    run = subprocess.run([nm, "-D", "--defined-only", library], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    if run.returncode != 0:
        raise SystemExit("ledger: nm failed on %s: %s" % (library, run.stderr.strip()))
    names = set()
    for line in run.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in ("T", "W", "i"):
            name = parts[2].split("@")[0]
            if name.startswith("xffl_"):
                names.add(name)
    return names


def _read(paths: List[str]) -> str:
    text = ""
    for p in paths:
        with open(p, encoding="utf-8") as f:
            text += f.read() + "\n"
    return text


def _strip_fortran_comments(text: str) -> str:
    return "\n".join(re.sub(r"!.*$", "", line) for line in text.splitlines())


def bound_by_language(root: str, functions: Set[str]) -> Tuple[Dict[str, Optional[Set[str]]], List[str]]:
    """language -> bound names (None when the language is skipped), and problems finding the sources."""
    bound: Dict[str, Optional[Set[str]]] = {}
    problems: List[str] = []

    rust_dir = os.path.join(root, "bindings", "rust")
    if os.path.isdir(rust_dir):
        sys_rs = os.path.join(rust_dir, "xffl-sys", "src", "bindings.rs")
        if os.path.isfile(sys_rs):
            bound["rust"] = set(re.findall(r"\bpub\s+fn\s+(xffl_\w+)\s*\(", _read([sys_rs])))
        else:
            problems.append("bindings/rust exists but bindings/rust/xffl-sys/src/bindings.rs does not: commit "
                            "the generated bindings")
            bound["rust"] = set()
        safe = sorted(glob.glob(os.path.join(rust_dir, "xffl", "src", "**", "*.rs"), recursive=True))
        if safe:
            used = set(re.findall(r"\b(xffl_\w+)\b", re.sub(r"//[^\n]*", "", _read(safe))))
            bound["rust-safe"] = used & functions
        else:
            problems.append("bindings/rust exists but the safe crate bindings/rust/xffl/src has no .rs file")
            bound["rust-safe"] = set()
    else:
        bound["rust"] = bound["rust-safe"] = None

    fortran_src = sorted(glob.glob(os.path.join(root, "bindings", "fortran", "src", "*.f90")))
    fortran_text = _strip_fortran_comments(_read(fortran_src))
    bound["fortran"] = set(re.findall(r'bind\s*\(\s*C\s*,\s*name\s*=\s*"(xffl_\w+)"', fortran_text, re.I))
    module = os.path.join(root, "bindings", "fortran", "src", "xffl.f90")
    module_text = _strip_fortran_comments(_read([module])) if os.path.isfile(module) else ""
    bound["fortran-api"] = set(re.findall(r"\b(xffl_\w+)\s*\(", module_text)) & functions

    julia_src = sorted(glob.glob(os.path.join(root, "bindings", "julia", "XFFL", "src", "*.jl")))
    julia_text = re.sub(r"#[^\n]*", "", _read(julia_src))
    bound["julia"] = set(re.findall(r"@ccall\s+libxffl\.(xffl_\w+)\s*\(", julia_text))
    api = os.path.join(root, "bindings", "julia", "XFFL", "src", "XFFL.jl")
    api_text = re.sub(r"#[^\n]*", "", _read([api])) if os.path.isfile(api) else ""
    bound["julia-api"] = set(re.findall(r"\bL\.(xffl_\w+)\s*\(", api_text))

    for lang in ("fortran", "julia"):
        if not bound[lang]:
            problems.append("%s: no binding found at all (looked in bindings/%s)" % (lang, lang))
    return bound, problems


def read_not_bound(path: str) -> Tuple[Dict[Tuple[str, str], str], List[str]]:
    entries, problems = {}, []
    if not os.path.isfile(path):
        return entries, problems
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 2)
            if len(parts) < 3 or not parts[2].strip():
                problems.append("not-bound.txt:%d: want `symbol language reason`, got %r" % (number, line))
                continue
            symbol, lang, reason = parts
            if lang not in LANGUAGES:
                problems.append("not-bound.txt:%d: unknown language %r (one of %s)" % (number, lang,
                                                                                      ", ".join(LANGUAGES)))
                continue
            entries[(symbol, lang)] = reason.strip()
    return entries, problems


def check(exported: Set[str], declared: Set[str], bound: Dict[str, Optional[Set[str]]],
          not_bound: Dict[Tuple[str, str], str]) -> List[str]:
    problems = []
    for name in sorted(exported - declared):
        problems.append("%s: exported by libxffl.so but declared in no public header" % name)
    for name in sorted(declared - exported):
        problems.append("%s: declared in the headers but not exported by libxffl.so (check src/xffl.map)" % name)
    for lang in LANGUAGES:
        names = bound.get(lang)
        if names is None:
            continue
        for name in sorted(exported):
            if name not in names and (name, lang) not in not_bound:
                problems.append("%s: not bound in %s; bind it, or list it in tests/ledger/not-bound.txt with the "
                                "reason" % (name, lang))
        for name in sorted(names - exported):
            problems.append("%s: bound in %s but not exported by libxffl.so" % (name, lang))
    for (name, lang), reason in sorted(not_bound.items()):
        if name not in exported:
            problems.append("not-bound.txt: %s (%s) is not exported by libxffl.so" % (name, lang))
        elif bound.get(lang) is not None and name in bound[lang]:
            problems.append("not-bound.txt: %s is bound in %s after all; remove the entry" % (name, lang))
    return problems


def print_table(exported: Set[str], bound, not_bound) -> None:
    langs = [l for l in LANGUAGES if bound.get(l) is not None]
    print("%-34s %s" % ("symbol", " ".join("%-11s" % l for l in langs)))
    for name in sorted(exported):
        cells = []
        for lang in langs:
            cells.append("%-11s" % ("yes" if name in bound[lang] else
                                    "NOT-BOUND" if (name, lang) in not_bound else "MISSING"))
        print("%-34s %s" % (name, " ".join(cells)))
    for (name, lang), reason in sorted(not_bound.items()):
        print("not bound: %s in %s: %s" % (name, lang, reason))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--library", required=True)
    ap.add_argument("--root", default=c_api.repo_root())
    ap.add_argument("--not-bound", default=None)
    ap.add_argument("--print", action="store_true", help="print the whole ledger table")
    args = ap.parse_args(argv)

    include = os.path.join(args.root, "include")
    api = c_api.load_api(include)
    exported = exported_symbols(args.library)
    declared = set(api.functions)
    if not exported:
        print("ledger: %s exports no xffl_ symbol" % args.library)
        return 1
    problems = []
    for name in sorted(declared):
        if c_api.header_of(include, name) is None:
            problems.append("%s: declared through xffl.h but in no include/xffl/*.h" % name)
    bound, found = bound_by_language(args.root, declared | exported)
    problems += found
    not_bound, bad = read_not_bound(args.not_bound or os.path.join(HERE, "not-bound.txt"))
    problems += bad
    problems += check(exported, declared, bound, not_bound)
    if args.print or problems:
        print_table(exported, bound, not_bound)
    for lang in LANGUAGES:
        if bound.get(lang) is None:
            print("ledger: %s skipped: bindings/%s does not exist yet" % (lang, lang.split("-")[0]))
    for p in problems:
        print("ledger: " + p)
    if problems:
        return 1
    print("ledger: %d exported symbols, all declared and bound (or listed as not bound) in %s" % (
        len(exported), ", ".join(l for l in LANGUAGES if bound.get(l) is not None)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
