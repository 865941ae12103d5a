#!/usr/bin/env python3
"""check_interfaces.py must fail on every kind of mismatch, so that its passing means something.

Each case breaks one thing in a temporary copy of xffl_c.f90 (or of the headers) and expects exit 1 with
a message naming the break; the unbroken copy must pass.
"""
import io
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import check_interfaces  # noqa: E402

RAW = os.path.join(HERE, "src", "xffl_c.f90")
MODULE = os.path.join(HERE, "src", "xffl.f90")
INCLUDE = os.path.join(ROOT, "include")


class CheckerCatchesMismatches(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="xffl-check-fortran-")
        with open(RAW, encoding="utf-8") as f:
            self.raw = f.read()
        with open(MODULE, encoding="utf-8") as f:
            self.module = f.read()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_checker(self, raw, module=None, include=INCLUDE):
        raw_path, module_path = os.path.join(self.tmp, "xffl_c.f90"), os.path.join(self.tmp, "xffl.f90")
        with open(raw_path, "w", encoding="utf-8") as f:
            f.write(raw)
        with open(module_path, "w", encoding="utf-8") as f:
            f.write(self.module if module is None else module)
        out = io.StringIO()
        with redirect_stdout(out):
            rc = check_interfaces.main(["--include", include, "--fortran", raw_path, "--module", module_path])
        return rc, out.getvalue()

    def broken(self, old, new, expect):
        self.assertEqual(self.raw.count(old), 1, "mutation anchor %r not found exactly once" % old)
        rc, out = self.run_checker(self.raw.replace(old, new))
        self.assertEqual(rc, 1, "checker passed xffl_c.f90 with %r -> %r:\n%s" % (old, new, out))
        self.assertRegex(out, expect)

    def test_unbroken_copy_passes(self):
        rc, out = self.run_checker(self.raw)
        self.assertEqual(rc, 0, out)

    def test_missing_interface(self):
        start = self.raw.index("    function xffl_barrier(group)")
        end = self.raw.index("end function xffl_barrier") + len("end function xffl_barrier")
        rc, out = self.run_checker(self.raw[:start] + self.raw[end:])
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"xffl_barrier: declared in the C header but has no bind\(C\) interface")

    def test_size_t_as_c_int(self):
        self.broken("      integer(c_size_t), value :: n_sizes", "      integer(c_int), value :: n_sizes",
                    r"xffl_federated_scaling: argument 3 \(n_sizes\)")

    def test_reference_instead_of_value(self):
        self.broken("      integer(c_int), value :: hsdp\n      integer(c_int) :: res\n    end function xffl_set_hsdp",
                    "      integer(c_int) :: hsdp\n      integer(c_int) :: res\n    end function xffl_set_hsdp",
                    r"xffl_set_hsdp: argument 2 \(hsdp\): Fortran integer\(c_int\) by reference cannot pass C `int32")

    def test_pointer_to_pointer_by_value(self):
        self.broken("      type(c_ptr), intent(out) :: out\n      integer(c_int) :: res\n    end function xffl_state_create",
                    "      type(c_ptr), value :: out\n      integer(c_int) :: res\n    end function xffl_state_create",
                    r"xffl_state_create: argument 1 \(out\)")

    def test_wrong_result(self):
        self.broken("    subroutine xffl_group_destroy(group) bind(C, name=\"xffl_group_destroy\")\n"
                    "      import :: c_ptr\n      type(c_ptr), value :: group\n    end subroutine xffl_group_destroy",
                    "    function xffl_group_destroy(group) bind(C, name=\"xffl_group_destroy\") result(res)\n"
                    "      import :: c_ptr, c_int\n      type(c_ptr), value :: group\n      integer(c_int) :: res\n"
                    "    end function xffl_group_destroy",
                    r"xffl_group_destroy: Fortran result integer\(c_int\), C returns `void`")

    def test_argument_count(self):
        self.broken('function xffl_set_fsdp(st) bind(C, name="xffl_set_fsdp")',
                    'function xffl_set_fsdp(st, extra) bind(C, name="xffl_set_fsdp")',
                    r"xffl_set_fsdp: 2 arguments in Fortran, 1 in C")

    def test_unknown_bind_name(self):
        self.broken('bind(C, name="xffl_set_fsdp")', 'bind(C, name="xffl_set_fsdpp")',
                    r"xffl_set_fsdpp: bound in Fortran but not declared")

    def test_constant_value(self):
        self.broken("XFFL_EBUFSIZE = -11", "XFFL_EBUFSIZE = -12", r"XFFL_EBUFSIZE: xffl_c says -12")

    def test_constant_not_public_in_xffl(self):
        module = self.module.replace("XFFL_FORMAT_JSON", "XFFL_FORMAT_JSON_X", 1)
        rc, out = self.run_checker(self.raw, module=module)
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"XFFL_FORMAT_JSON: not made public by module xffl")

    def test_header_gains_a_function(self):
        include = os.path.join(self.tmp, "include")
        shutil.copytree(INCLUDE, include)
        path = os.path.join(include, "xffl", "group.h")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace("XFFL_END_DECLS", "XFFL_API int xffl_group_is_new(const xffl_group_t *g);\n"
                                 "XFFL_END_DECLS", 1))
        rc, out = self.run_checker(self.raw, include=include)
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"xffl_group_is_new: declared in the C header but has no bind\(C\) interface")


if __name__ == "__main__":
    unittest.main(verbosity=2)
