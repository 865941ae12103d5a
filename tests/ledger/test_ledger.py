#!/usr/bin/env python3
"""The ledger's rules on small made-up inputs: each rule must fire when its case occurs, so that a passing
ledger means every symbol was really looked at."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ledger  # noqa: E402

ALL = {lang: {"xffl_a", "xffl_b"} for lang in ledger.LANGUAGES}


def bound_with(**changes):
    bound = {lang: set(names) for lang, names in ALL.items()}
    for lang, names in changes.items():
        bound[lang.replace("_", "-")] = names
    return bound


class LedgerRules(unittest.TestCase):
    def test_everything_bound_passes(self):
        self.assertEqual(ledger.check({"xffl_a", "xffl_b"}, {"xffl_a", "xffl_b"}, bound_with(), {}), [])

    def test_symbol_missing_in_one_language(self):
        problems = ledger.check({"xffl_a", "xffl_b"}, {"xffl_a", "xffl_b"}, bound_with(julia={"xffl_a"}), {})
        self.assertEqual(len(problems), 1)
        self.assertIn("xffl_b: not bound in julia", problems[0])

    def test_listed_as_not_bound_passes(self):
        problems = ledger.check({"xffl_a", "xffl_b"}, {"xffl_a", "xffl_b"}, bound_with(fortran_api={"xffl_a"}),
                                {("xffl_b", "fortran-api"): "no arrays of arrays"})
        self.assertEqual(problems, [])

    def test_stale_not_bound_entry(self):
        problems = ledger.check({"xffl_a", "xffl_b"}, {"xffl_a", "xffl_b"}, bound_with(),
                                {("xffl_b", "rust"): "was missing once"})
        self.assertTrue(any("bound in rust after all" in p for p in problems), problems)

    def test_exported_but_undeclared(self):
        problems = ledger.check({"xffl_a", "xffl_b", "xffl_secret"}, {"xffl_a", "xffl_b"},
                                bound_with(**{l.replace("-", "_"): {"xffl_a", "xffl_b", "xffl_secret"}
                                              for l in ledger.LANGUAGES}), {})
        self.assertTrue(any("xffl_secret: exported by libxffl.so but declared in no public header" in p
                            for p in problems), problems)

    def test_declared_but_not_exported(self):
        problems = ledger.check({"xffl_a"}, {"xffl_a", "xffl_b"}, bound_with(**{
            l.replace("-", "_"): {"xffl_a"} for l in ledger.LANGUAGES}), {})
        self.assertTrue(any("xffl_b: declared in the headers but not exported" in p for p in problems), problems)

    def test_bound_but_not_exported(self):
        problems = ledger.check({"xffl_a", "xffl_b"}, {"xffl_a", "xffl_b"},
                                bound_with(fortran={"xffl_a", "xffl_b", "xffl_gone"}), {})
        self.assertTrue(any("xffl_gone: bound in fortran but not exported" in p for p in problems), problems)

    def test_skipped_language_is_not_checked(self):
        bound = bound_with(rust=None, rust_safe=None)
        self.assertEqual(ledger.check({"xffl_a", "xffl_b"}, {"xffl_a", "xffl_b"}, bound, {}), [])

    def test_not_bound_file_format(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# comment\nxffl_a julia because\nxffl_b klingon reason\nxffl_c rust\n")
        try:
            entries, problems = ledger.read_not_bound(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(entries, {("xffl_a", "julia"): "because"})
        self.assertEqual(len(problems), 2, problems)

    def test_rust_directory_without_bindings_is_a_clear_failure(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "bindings", "rust", "xffl", "src"))
            with open(os.path.join(root, "bindings", "rust", "xffl", "src", "lib.rs"), "w") as f:
                f.write("fn main() { xffl_a(); }\n")
            bound, problems = ledger.bound_by_language(root, {"xffl_a"})
            self.assertTrue(any("bindings.rs does not" in p for p in problems), problems)
        with tempfile.TemporaryDirectory() as root:
            bound, problems = ledger.bound_by_language(root, {"xffl_a"})
            self.assertIsNone(bound["rust"])
            self.assertTrue(any("fortran: no binding found" in p for p in problems), problems)


if __name__ == "__main__":
    unittest.main(verbosity=2)
