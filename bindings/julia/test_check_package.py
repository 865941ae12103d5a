#!/usr/bin/env python3
"""check_package.py must catch each broken rule, so that its passing means something: each case copies
the real package into a temporary folder, breaks one thing, and expects the checker to name it. The
unbroken copy must pass."""
import io
import os
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_package  # noqa: E402

PACKAGE = os.path.join(HERE, "XFFL")


class CheckerCatchesBreaks(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="xffl-check-package-")
        self.copy = os.path.join(self.tmp, "XFFL")
        shutil.copytree(PACKAGE, self.copy)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, relative, old, new):
        path = os.path.join(self.copy, relative)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.assertIn(old, text, "the test's anchor vanished from %s" % relative)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))

    def run_checker(self):
        out = io.StringIO()
        with redirect_stdout(out):
            rc = check_package.main(["--package", self.copy])
        return rc, out.getvalue()

    def expect_problem(self, needle):
        rc, out = self.run_checker()
        self.assertEqual(rc, 1, out)
        self.assertIn(needle, out)

    def test_unbroken_copy_passes(self):
        rc, out = self.run_checker()
        self.assertEqual(rc, 0, out)

    def test_exporting_rank_is_caught(self):
        self.edit("src/XFFL.jl", "export world_size,", "export rank, world_size,")
        self.expect_problem("XFFL exports `rank`, which LinearAlgebra exports too")

    def test_exporting_describe_and_mesh_is_caught(self):
        self.edit("src/XFFL.jl", "export world_size,", "export describe, mesh, stream, world_size,")
        for name in ("describe", "mesh", "stream"):
            self.expect_problem("XFFL exports `%s`" % name)

    def test_exporting_an_undefined_name_is_caught(self):
        self.edit("src/XFFL.jl", "export world_size,", "export no_such_function, world_size,")
        self.expect_problem("XFFL exports `no_such_function` but src/XFFL.jl does not define it")

    def test_a_wrong_preferences_uuid_is_caught(self):
        self.edit("src/LibXFFL.jl", 'Base.UUID("c56f7f81', 'Base.UUID("d56f7f81')
        self.expect_problem("preferences would be read for another package")

    def test_pkg_in_runtests_is_caught(self):
        self.edit("test/runtests.jl", "using Test\n", "using Test\nusing Pkg; Pkg.instantiate()\n")
        self.expect_problem("test/runtests.jl uses Pkg")

    def test_a_registry_dependency_is_caught(self):
        self.edit("Project.toml", "[deps]\n", '[deps]\nPreferences = "21216c6a-2e73-6563-6e65-726566657250"\n')
        self.expect_problem("Project.toml depends on Preferences")

    def test_an_unignored_manifest_is_caught(self):
        os.remove(os.path.join(self.copy, ".gitignore"))
        self.expect_problem("does not ignore Manifest.toml")


if __name__ == "__main__":
    unittest.main(verbosity=2)
