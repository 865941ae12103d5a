#!/usr/bin/env python3
"""The checker must fail on every kind of mismatch, so that its passing means something.

Each case copies the real bindings (or the real headers) into a temporary folder, breaks one thing, runs
check_ccalls.py on the copy, and expects exit 1 with a message naming the break. The unbroken copy must
pass, so a checker that always fails is caught too.
"""
import io
import os
import re
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import check_ccalls  # noqa: E402

SOURCE = os.path.join(HERE, "XFFL", "src", "LibXFFL.jl")
INCLUDE = os.path.join(ROOT, "include")


class CheckerCatchesMismatches(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="xffl-check-ccalls-")
        with open(SOURCE, encoding="utf-8") as f:
            self.text = f.read()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_checker(self, text, include=INCLUDE):
        path = os.path.join(self.tmp, "LibXFFL.jl")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        out = io.StringIO()
        with redirect_stdout(out):
            rc = check_ccalls.main(["--include", include, "--sources", path])
        return rc, out.getvalue()

    def broken(self, old, new, expect, count=1):
        self.assertEqual(self.text.count(old), count, "mutation anchor %r not found exactly %d time(s)" % (old, count))
        rc, out = self.run_checker(self.text.replace(old, new))
        self.assertEqual(rc, 1, "checker passed a binding with %r -> %r:\n%s" % (old, new, out))
        self.assertRegex(out, expect)

    def test_unbroken_copy_passes(self):
        rc, out = self.run_checker(self.text)
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"\d+ @ccall and \d+ constants agree")

    def test_missing_function(self):
        self.broken("xffl_barrier(group) =\n    @ccall libxffl.xffl_barrier(group::Ptr{xffl_group_t})::Cint\n", "",
                    r"xffl_barrier: declared in the C header but no @ccall binds it")

    def test_size_t_passed_as_cint(self):
        self.broken("count::Csize_t,\n                                  dtype::Cint, op::Cint",
                    "count::Cint,\n                                  dtype::Cint, op::Cint",
                    r"xffl_allreduce argument 4 \(count\): Julia Cint does not match C `size_t count`")

    def test_pointer_to_pointer_lost(self):
        self.broken("xffl_state_create(out::Ptr{Ptr{xffl_state_t}})", "xffl_state_create(out::Ptr{xffl_state_t})",
                    r"xffl_state_create argument 1 \(out\)")

    def test_value_instead_of_pointer(self):
        self.broken("attr::Cint, value::Ptr{Cint})::Cint\nxffl_get_ints",
                    "attr::Cint, value::Cint)::Cint\nxffl_get_ints",
                    r"xffl_get_int argument 3 \(value\): Julia Cint does not match C `int32 \* value`")

    def test_extra_argument(self):
        self.broken("xffl_set_hsdp(st::Ptr{xffl_state_t}, hsdp::Cint)::Cint",
                    "xffl_set_hsdp(st::Ptr{xffl_state_t}, hsdp::Cint, extra::Cint)::Cint",
                    r"xffl_set_hsdp has 3 arguments, C has 2")

    def test_wrong_return_type(self):
        self.broken("xffl_set_fsdp(st::Ptr{xffl_state_t})::Cint", "xffl_set_fsdp(st::Ptr{xffl_state_t})::Cvoid",
                    r"xffl_set_fsdp returns Cvoid, C returns `int32`")

    def test_handle_of_the_wrong_type(self):
        self.broken("xffl_group_destroy(group::Ptr{xffl_group_t})", "xffl_group_destroy(group::Ptr{xffl_state_t})",
                    r"xffl_group_destroy argument 1")

    def test_cstring_for_a_buffer_c_writes(self):
        self.broken("format::Cint, buf::Ptr{UInt8}", "format::Cint, buf::Cstring",
                    r"xffl_state_describe argument 3 \(buf\): Julia Cstring")

    def test_double_as_float(self):
        self.broken("weights::Ptr{Cdouble}", "weights::Ptr{Cfloat}", r"xffl_set_federated_weights argument 2")

    def test_unknown_function(self):
        rc, out = self.run_checker(self.text.replace(
            "end # module LibXFFL", "xffl_not_in_c() = @ccall libxffl.xffl_not_in_c()::Cint\nend # module LibXFFL"))
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"@ccall xffl_not_in_c: no such function in the C header")

    def test_duplicate_ccall(self):
        rc, out = self.run_checker(self.text.replace(
            "end # module LibXFFL", "again() = @ccall libxffl.xffl_barrier(g::Ptr{xffl_group_t})::Cint\nend # module"))
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"second @ccall of xffl_barrier")

    def test_other_library(self):
        self.broken("@ccall libxffl.xffl_set_fsdp(", "@ccall libother.xffl_set_fsdp(", r"uses library 'libother'")

    def test_constant_value(self):
        self.broken("const XFFL_EBUFSIZE = Cint(-11)", "const XFFL_EBUFSIZE = Cint(-13)",
                    r"XFFL_EBUFSIZE: Julia says -13, the C header says -11")

    def test_constant_missing(self):
        self.broken("const XFFL_ATTR_HSDP = Cint(24)\n", "", r"XFFL_ATTR_HSDP: C enum constant has no")

    def test_header_gains_a_function(self):
        include = os.path.join(self.tmp, "include")
        shutil.copytree(INCLUDE, include)
        state_h = os.path.join(include, "xffl", "state.h")
        with open(state_h, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"XFFL_END_DECLS", "XFFL_API xffl_status_t xffl_brand_new(xffl_state_t *st, int x);\n"
                      "XFFL_END_DECLS", text, count=1)
        with open(state_h, "w", encoding="utf-8") as f:
            f.write(text)
        rc, out = self.run_checker(self.text, include=include)
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"xffl_brand_new: declared in the C header but no @ccall binds it")

    def test_header_gains_an_enum_value(self):
        include = os.path.join(self.tmp, "include")
        shutil.copytree(INCLUDE, include)
        types_h = os.path.join(include, "xffl", "types.h")
        with open(types_h, encoding="utf-8") as f:
            text = f.read()
        with open(types_h, "w", encoding="utf-8") as f:
            f.write(text.replace("XFFL_FORMAT_JSON = 1", "XFFL_FORMAT_JSON = 1,\n    XFFL_FORMAT_YAML = 2"))
        rc, out = self.run_checker(self.text, include=include)
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"XFFL_FORMAT_YAML: C enum constant has no")


if __name__ == "__main__":
    unittest.main(verbosity=2)
