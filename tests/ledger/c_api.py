"""The C side of every binding check: the functions and enum constants of include/xffl.h, read from
clang's JSON AST dump (never from regexes over the header text), with each type reduced to what a
foreign-function interface cares about: size and kind of the value, and pointer depth.

Used by bindings/julia/check_ccalls.py, bindings/fortran/check_interfaces.py and tests/ledger/ledger.py.
"""
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

# Scalar kinds, named after what crosses the ABI (LP64: size_t is 64-bit unsigned).
SCALARS = {
    "int": "int32",
    "unsigned int": "uint32",
    "long": "int64",
    "unsigned long": "size_t",  # size_t on LP64 Linux
    "long long": "int64",
    "unsigned long long": "uint64",
    "double": "double",
    "float": "float",
    "char": "char",
    "void": "void",
}


@dataclass(frozen=True)
class CType:
    """A C type as an FFI sees it: base kind, pointer depth, constness of the pointee."""
    base: str          # int32, size_t, double, char, void, struct:xffl_state, fnptr (a callback), ...
    depth: int = 0     # number of '*'
    const_pointee: bool = False  # `const T *`: only meaningful when depth >= 1

    def __str__(self) -> str:
        text = ("const " if self.const_pointee else "") + self.base
        return text + " " + "*" * self.depth if self.depth else text


@dataclass
class CFunction:
    name: str
    ret: CType
    params: List[Tuple[str, CType]] = field(default_factory=list)


@dataclass
class CApi:
    functions: Dict[str, CFunction]
    constants: Dict[str, int]           # every enum constant, name -> value
    enums: Dict[str, List[str]]         # enum tag -> constant names in declaration order


def find_clang() -> str:
    for name in (os.environ.get("XFFL_CLANG", ""), "clang-14", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise SystemExit("c_api: no clang found (install clang-14, or set XFFL_CLANG)")


def dump_ast(header: str, include_dir: str, clang: Optional[str] = None) -> dict:
    cmd = [clang or find_clang(), "-x", "c", "-std=c99", "-I", include_dir,
           "-Xclang", "-ast-dump=json", "-fsyntax-only", header]
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        raise SystemExit("c_api: clang failed on %s:\n%s" % (header, run.stderr))
    return json.loads(run.stdout)


def _parse_type(text: str, typedefs: Dict[str, str]) -> CType:
    """Reduce a clang qualType string ("const xffl_state_t *", "void *const *") to a CType."""
    text = text.strip()
    if re.match(r"^[\w\s\*]+\(\*\)\(.*\)$", text):
        # A callback (xffl_log_callback_t): crosses the ABI as a code address; the bindings pass their
        # own function's address (Julia @cfunction, Fortran c_funloc, Rust extern "C" fn).
        return CType("fnptr", 0)
    if "(" in text or "[" in text:
        raise ValueError("c_api: unsupported C type %r (function pointer or array)" % text)
    depth = text.count("*")
    # The qualifier that matters to callers is the one on the pointee: the words before the first '*'.
    head = text.split("*", 1)[0]
    words = head.split()
    const_pointee = depth > 0 and "const" in words
    words = [w for w in words if w not in ("const", "volatile", "restrict")]
    base = " ".join(words)
    if base in typedefs:  # resolve the typedef (size_t -> unsigned long, xffl_dtype_t -> enum xffl_dtype)
        inner = _parse_type(typedefs[base], typedefs)
        return CType(inner.base, depth + inner.depth, const_pointee or inner.const_pointee)
    if base.startswith("enum "):
        base = "int32"  # every xffl enum is int-sized (checked in load_api)
    elif base.startswith("struct "):
        base = "struct:" + base.split()[1]
    elif base in SCALARS:
        base = SCALARS[base]
    else:
        raise ValueError("c_api: unknown C type %r in %r" % (base, text))
    return CType(base, depth, const_pointee)


def _walk(node):
    yield node
    for child in node.get("inner", []) or []:
        yield from _walk(child)


def load_api(include_dir: str, clang: Optional[str] = None, prefix: str = "xffl_") -> CApi:
    header = os.path.join(include_dir, "xffl.h")
    ast = dump_ast(header, include_dir, clang)
    typedefs: Dict[str, str] = {}
    for node in ast.get("inner", []):
        if node.get("kind") == "TypedefDecl":
            ty = node["type"]
            typedefs[node["name"]] = ty.get("desugaredQualType", ty["qualType"])
    functions: Dict[str, CFunction] = {}
    constants: Dict[str, int] = {}
    enums: Dict[str, List[str]] = {}
    for node in ast.get("inner", []):
        kind = node.get("kind")
        if kind == "FunctionDecl" and node.get("name", "").startswith(prefix):
            signature = node["type"]["qualType"]
            ret_text = signature[: signature.index("(")]
            params = [(p.get("name", "arg%d" % i), _parse_type(p["type"]["qualType"], typedefs))
                      for i, p in enumerate(c for c in node.get("inner", []) if c["kind"] == "ParmVarDecl")]
            if node.get("variadic"):
                raise SystemExit("c_api: %s is variadic; no binding can call it" % node["name"])
            functions[node["name"]] = CFunction(node["name"], _parse_type(ret_text, typedefs), params)
        elif kind == "EnumDecl" and node.get("name", "").startswith(prefix):
            names = []
            for const in node.get("inner", []):
                if const.get("kind") != "EnumConstantDecl":
                    continue
                if const["type"]["qualType"] != "int":
                    raise SystemExit("c_api: enum constant %s is not int-sized" % const["name"])
                values = [n["value"] for n in _walk(const) if n.get("kind") == "ConstantExpr" and "value" in n]
                if not values:
                    values = [str(constants[names[-1]] + 1) if names else "0"]  # implicit value
                constants[const["name"]] = int(values[0])
                names.append(const["name"])
            enums[node["name"]] = names
    return CApi(functions, constants, enums)


def repo_root() -> str:
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def header_of(include_dir: str, function: str) -> Optional[str]:
    """The include/xffl/*.h file that declares `function`, by name (the AST says the signature)."""
    pattern = re.compile(r"\b%s\s*\(" % re.escape(function))
    sub = os.path.join(include_dir, "xffl")
    for name in sorted(os.listdir(sub)):
        if name.endswith(".h"):
            with open(os.path.join(sub, name), encoding="utf-8") as handle:
                if pattern.search(handle.read()):
                    return "xffl/" + name
    return None


if __name__ == "__main__":  # debugging aid: print the model
    import sys
    api = load_api(sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo_root(), "include"))
    for fn in api.functions.values():
        print("%s %s(%s)" % (fn.ret, fn.name, ", ".join("%s %s" % (t, n) for n, t in fn.params)))
    for name, value in api.constants.items():
        print(name, "=", value)
