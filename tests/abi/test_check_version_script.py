#!/usr/bin/env python3
"""The version-script checker catches what it is for: run against small made-up maps and headers."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_version_script as vs  # noqa: E402

DECLARED = {"xffl_a": "state.h", "xffl_b": "group.h", "xffl_c": "mesh.h"}
GOOD = """/* comment with include/xffl/*.h inside */
XFFL_0.1 {
  global:
    xffl_a;
    xffl_b;
  local:
    *;
};
XFFL_0.2 {
  global:
    xffl_c;
} XFFL_0.1;
"""


class VersionScriptChecks(unittest.TestCase):
    def problems(self, text, declared=None):
        return vs.check(text, DECLARED if declared is None else declared)[0]

    def test_consistent_map_passes_with_two_nodes(self):
        problems, version_of = vs.check(GOOD, DECLARED)
        self.assertEqual(problems, [])
        self.assertEqual(version_of, {"xffl_a": "XFFL_0.1", "xffl_b": "XFFL_0.1", "xffl_c": "XFFL_0.2"})

    def test_declared_function_listed_nowhere_fails_naming_it(self):
        problems = self.problems(GOOD, dict(DECLARED, xffl_new="federated.h"))
        self.assertEqual(len(problems), 1)
        self.assertIn("xffl_new (declared in federated.h) is in no node", problems[0])

    def test_listed_name_no_header_declares_fails(self):
        problems = self.problems(GOOD.replace("xffl_c;", "xffl_c;\n    xffl_gone;"))
        self.assertEqual(len(problems), 1)
        self.assertIn("node XFFL_0.2 lists xffl_gone", problems[0])

    def test_wildcard_fails(self):
        problems = self.problems(GOOD.replace("xffl_a;\n    xffl_b;", "xffl_*;"))
        self.assertTrue(any("wildcard 'xffl_*'" in p for p in problems), problems)

    def test_name_in_two_nodes_fails(self):
        problems = self.problems(GOOD.replace("xffl_c;", "xffl_c;\n    xffl_a;"))
        self.assertEqual(problems, ["xffl_a is listed in node XFFL_0.1 and again in node XFFL_0.2"])

    def test_other_local_pattern_fails(self):
        problems = self.problems(GOOD.replace("*;\n};", "xffl_a;\n};"))
        self.assertTrue(any("local pattern 'xffl_a'" in p for p in problems), problems)

    def test_declarations_are_read_over_several_lines(self):
        import tempfile
        with tempfile.TemporaryDirectory() as root:
            os.mkdir(os.path.join(root, "xffl"))
            with open(os.path.join(root, "xffl", "x.h"), "w", encoding="utf-8") as f:
                f.write("XFFL_API const char *\nxffl_one(void);\nXFFL_API xffl_status_t xffl_two(int a,\n int b);\n"
                        "typedef int (*xffl_not_api)(void);\n")
            self.assertEqual(vs.declared_functions(root), {"xffl_one": "x.h", "xffl_two": "x.h"})


if __name__ == "__main__":
    unittest.main()
