#!/usr/bin/env python3
"""Black-box tests of xffl-topo: run the built tool and check what it prints.

usage: check_xffl_topo.py CASE XFFL_TOPO LIBXFFL
Each CASE is one ctest test. Exit 0 pass, 1 fail (with the reason), 77 skipped.
LIBXFFL is loaded with ctypes so that error messages are compared with what the library itself says.
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

TOPO = sys.argv[2]
LIB = sys.argv[3]
# Set by CMake in sanitizer builds: the big world of case_text is 1024 ranks there, not 65536 (15 s
# under ASan); both run every branch of the text format, and the ci build prints the 65536 ranks.
SANITIZED = os.environ.get("TOPO_CHECK_SANITIZED") == "1"
SKIPPED = 77


class Failure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failure(message)


def run(*args, rc=0):
    proc = subprocess.run([TOPO, *map(str, args)], capture_output=True, text=True, timeout=60)
    expect(proc.returncode == rc,
           f"xffl-topo {' '.join(map(str, args))}: exit {proc.returncode}, expected {rc}\nstderr: {proc.stderr}")
    return proc


def plan_json(*args):
    return json.loads(run(*args, "--format", "json").stdout)


# ------------------------------------------------------------------ the library's own messages

def library_message(world, rank=0, sizes=None, hsdp=0):
    """The message xffl gives for this layout, through the C API, as xffl-topo should report it."""
    lib = ctypes.CDLL(LIB)
    lib.xffl_last_error_message.restype = ctypes.c_char_p
    st = ctypes.c_void_p()
    expect(lib.xffl_state_create(ctypes.byref(st)) == 0, "xffl_state_create failed")
    try:
        rc = lib.xffl_set_global(st, 0, 0, b"127.0.0.1", 0, rank, world)
        if rc == 0 and sizes is not None:
            arr = (ctypes.c_int * len(sizes))(*sizes)
            rc = lib.xffl_federated_scaling(st, arr, ctypes.c_size_t(len(sizes)), hsdp)
        elif rc == 0:
            rc = lib.xffl_set_hsdp(st, hsdp) if hsdp else lib.xffl_set_fsdp(st)
        expect(rc != 0, f"the library accepts world {world} rank {rank} sizes {sizes} hsdp {hsdp}")
        return lib.xffl_last_error_message().decode()
    finally:
        lib.xffl_state_destroy(st)


def expect_one_error_line(proc, must_contain=None):
    lines = proc.stderr.splitlines()
    expect(len(lines) == 1, f"expected one stderr line, got {len(lines)}: {proc.stderr!r}")
    expect(lines[0].startswith("xffl-topo: error: "), f"stderr line lacks the prefix: {lines[0]!r}")
    expect(proc.stdout == "", f"nothing on stdout expected on error, got {proc.stdout[:200]!r}")
    if must_contain is not None:
        expect(lines[0] == "xffl-topo: error: " + must_contain,
               f"stderr {lines[0]!r}\n  expected the library's message {must_contain!r}")
    return lines[0]


# ------------------------------------------------------------------ cases

# DESIGN.md 3.3 / spec 5.4: W = 12, F = (4, 8), S = 2, every rank.
TABLE_5_4 = [
    # r, fl, f, rl, rr, sender, receive_from, FG, RG, shard row, FED
    (0, 0, 0, 0, 0, True, None, [0, 4], [0, 2], [0, 1], range(0, 4)),
    (1, 1, 0, 1, 0, False, 3, [1], [1, 3], [0, 1], range(0, 4)),
    (2, 2, 0, 0, 1, False, 0, [2], [0, 2], [2, 3], range(0, 4)),
    (3, 3, 0, 1, 1, True, None, [3, 7], [1, 3], [2, 3], range(0, 4)),
    (4, 0, 1, 0, 0, True, None, [0, 4], [4, 6, 8, 10], [4, 5], range(4, 12)),
    (5, 1, 1, 1, 0, False, 7, [5], [5, 7, 9, 11], [4, 5], range(4, 12)),
    (6, 2, 1, 0, 1, False, 4, [6], [4, 6, 8, 10], [6, 7], range(4, 12)),
    (7, 3, 1, 1, 1, True, None, [3, 7], [5, 7, 9, 11], [6, 7], range(4, 12)),
    (8, 4, 1, 0, 2, False, 4, [8], [4, 6, 8, 10], [8, 9], range(4, 12)),
    (9, 5, 1, 1, 2, False, 7, [9], [5, 7, 9, 11], [8, 9], range(4, 12)),
    (10, 6, 1, 0, 3, False, 4, [10], [4, 6, 8, 10], [10, 11], range(4, 12)),
    (11, 7, 1, 1, 3, False, 7, [11], [5, 7, 9, 11], [10, 11], range(4, 12)),
]


def case_json_3_3():
    plans = plan_json("--world", 12, "--federated", "4,8", "--hsdp", 2)
    expect(isinstance(plans, list) and len(plans) == 12, f"expected 12 objects, got {len(plans)}")
    meshes = {0: [[0, 1], [2, 3]], 1: [[4, 5], [6, 7], [8, 9], [10, 11]]}
    for (r, fl, f, rl, rr, sender, recv, fg, rg, row, fed), p in zip(TABLE_5_4, plans):
        want = {
            "rank": r, "world_size": 12, "backend": "none", "streams": 1,
            "federated_local_rank": fl, "federated_rank": f, "federated_world_size": 2,
            "federated_local_size": [4, 8], "replica_local_rank": rl, "replica_local_size": 2,
            "replica_rank": rr, "replica_world_size": [2, 4], "is_sender": sender, "receive_from": recv,
            "federated_group": fg, "replica_group": rg, "federation": list(fed), "fsdp_mesh": None,
            "hsdp_mesh": meshes[f], "node_local_rank": None, "node_rank": None,
        }
        for key, value in want.items():
            expect(key in p, f"rank {r}: key {key} missing")
            expect(p[key] == value, f"rank {r}: {key} = {p[key]!r}, expected {value!r}")
        expect(p["hsdp_mesh"][rr] == row, f"rank {r}: its HSDP_SHARD row {p['hsdp_mesh'][rr]} != {row}")
    one = plan_json("--world", 12, "--federated", "4,8", "--hsdp", 2, "--rank", 7)
    expect(one == plans[7], "--rank 7 does not give the same object as element 7 of the array")


def case_json_expand():
    # A single federated size expands to equal groups: spec 5.3.
    plans = plan_json("--world", 8, "--federated", 4)
    expect(len(plans) == 8, "expected 8 objects")
    for p in plans:
        r = p["rank"]
        expect(p["federated_local_size"] == [4, 4], f"rank {r}: federated_local_size {p['federated_local_size']}")
        expect(p["federated_group"] == [r % 4, r % 4 + 4], f"rank {r}: federated_group {p['federated_group']}")
        expect(p["fsdp_mesh"] == list(range(r // 4 * 4, r // 4 * 4 + 4)), f"rank {r}: fsdp_mesh {p['fsdp_mesh']}")
        expect(p["is_sender"] is True and p["receive_from"] is None, f"rank {r}: sender fields")
        expect(p["replica_group"] is None and p["hsdp_mesh"] is None, f"rank {r}: replica fields must be null")


def case_json_nodes_streams():
    # spec 5.6: 4 ranks per node, federated 8 -> (8, 8), hsdp 4; three streams.
    plans = plan_json("--world", 16, "--node-size", 4, "--federated", 8, "--hsdp", 4, "--streams", 3)
    senders = {0, 5, 2, 7, 8, 13, 10, 15}
    recv = {1: 5, 3: 7, 4: 0, 6: 2, 9: 13, 11: 15, 12: 8, 14: 10}
    for p in plans:
        r = p["rank"]
        expect((p["node_local_rank"], p["node_local_size"], p["node_rank"], p["node_world_size"]) == (r % 4, 4, r // 4, 4),
               f"rank {r}: node fields {p['node_local_rank']}, {p['node_rank']}")
        expect(p["is_sender"] == (r in senders), f"rank {r}: is_sender {p['is_sender']}")
        expect(p["receive_from"] == recv.get(r), f"rank {r}: receive_from {p['receive_from']}")
        expect(p["federated_group"] == [r % 8, r % 8 + 8], f"rank {r}: federated_group {p['federated_group']}")
        expect(p["streams"] == 3, f"rank {r}: streams {p['streams']}")


INVALID = [
    # (args, world, rank, sizes, hsdp): spec "Inputs xFFL mishandles"
    (["--world", 8, "--federated", "3,3"], 8, 0, [3, 3], 0),
    (["--world", 8, "--federated", "4,4,4"], 8, 0, [4, 4, 4], 0),
    (["--world", 8, "--federated", "2,4", "--hsdp", 2], 8, 0, [2, 4], 2),
    (["--world", 6, "--federated", "2,4"], 6, 0, [2, 4], 0),
    (["--world", 12, "--federated", "4,8", "--hsdp", 3], 12, 0, [4, 8], 3),
    (["--world", 12, "--federated", 6, "--hsdp", 4], 12, 0, [6], 4),
    (["--world", 4, "--rank", 5], 4, 5, None, 0),
    (["--world", 8, "--hsdp", 3], 8, 0, None, 3),
    (["--world", 0], 0, 0, None, 0),
]


def case_invalid_inputs():
    for args, world, rank, sizes, hsdp in INVALID:
        message = library_message(world, rank, sizes, hsdp)
        expect(message, f"empty library message for {args}")
        for fmt in ("text", "json", "svg", "dot"):
            expect_one_error_line(run(*args, "--format", fmt, rc=2), message)
    # the same rows the library names: a few words that must be in those messages
    expect("sum to 6, world is 8" in library_message(8, 0, [3, 3], 0), "sum message")
    expect("outside [0, 4)" in library_message(4, 5), "rank message")
    # a single value expands: 8, federated 4 is valid (spec: expands to (4, 4))
    expect(len(plan_json("--world", 8, "--federated", 4)) == 8, "federated 4 on world 8")
    # the node size is the library's to judge too
    expect_one_error_line(run("--world", 8, "--node-size", 3, rc=2))
    expect_one_error_line(run("--world", 8, "--node-size", 0, rc=2))
    expect_one_error_line(run("--world", 8, "--streams", 0, rc=2))


def case_hsdp_zero():
    # --hsdp 0 means no HSDP with and without --federated: the plan of leaving --hsdp out.
    for extra in ([], ["--federated", 4]):
        for fmt in ("json", "text"):
            plain = run("--world", 8, *extra, "--format", fmt).stdout
            zero = run("--world", 8, *extra, "--hsdp", 0, "--format", fmt).stdout
            expect(zero == plain, f"--hsdp 0 {extra} ({fmt}) differs from no --hsdp")
    plans = plan_json("--world", 8, "--hsdp", 0)
    expect(all(p["hsdp_mesh"] is None and p["fsdp_mesh"] == list(range(8)) for p in plans), "--hsdp 0 alone is FSDP")
    # unequal sizes still need HSDP, and a negative hsdp is refused in both forms
    expect_one_error_line(run("--world", 6, "--federated", "2,4", "--hsdp", 0, rc=2), library_message(6, 0, [2, 4], 0))
    expect_one_error_line(run("--world", 8, "--hsdp", -2, rc=2), library_message(8, 0, None, -2))
    expect_one_error_line(run("--world", 8, "--federated", 4, "--hsdp", -2, rc=2), library_message(8, 0, [4], -2))


def case_usage_errors():
    for args in (["--world"], ["--world", "abc"], ["--world", "12x"], ["--hsdp", 2], ["--world", 8, "--bogus"],
                 ["--world", 8, "--format", "yaml"], ["--world", 8, "--federated", "4,,4"],
                 ["--world", 8, "--world", 8], ["--world", "99999999999"], ["--world", 8, "--output", ""]):
        line = expect_one_error_line(run(*args, rc=2))
        expect(len(line) > len("xffl-topo: error: ") + 5, f"message too short for {args}: {line!r}")
    help_run = run("--help")
    expect(help_run.stdout.startswith("usage: xffl-topo --world W"), "--help prints the usage")
    expect(help_run.stderr == "", "--help writes nothing on stderr")
    expect(run("--world=8", "--federated=2,6", "--hsdp=2").stdout == run("--world", 8, "--federated", "2,6", "--hsdp", 2).stdout,
           "--flag=value and --flag value must mean the same")


def case_text():
    out = run("--world", 8, "--federated", "2,6", "--hsdp", 2).stdout
    lines = out.splitlines()
    expect(lines[0].startswith("xffl plan of world 8: 2 facilities (federated 2,6)"), f"header: {lines[0]!r}")
    expect("cross facilities (4 of 8) in 2 FEDERATED groups: [0,2] [1,5]" in out, "crossing summary")
    expect("    replica 1     4       [5]" in lines, "the mesh picture marks sender 5 in facility 1")
    header = next(i for i, l in enumerate(lines) if l.split()[:2] == ["r", "fl"])
    expect(lines[header].split() == ["r", "fl", "f", "rl", "rr", "sender", "receive_from", "FEDERATED", "REPLICA",
                                     "HSDP_SHARD", "FEDERATION"], f"table header: {lines[header]!r}")
    rows = [l.split() for l in lines[header + 2:header + 10]]
    expect(rows[3] == ["3", "1", "1", "1", "0", "no", "5", "3", "3,5,7", "2,3", "2-7"], f"row of rank 3: {rows[3]}")
    expect(rows[5] == ["5", "3", "1", "1", "1", "yes", "-", "1,5", "3,5,7", "4,5", "2-7"], f"row of rank 5: {rows[5]}")
    one = run("--world", 8, "--federated", "2,6", "--hsdp", 2, "--rank", 3).stdout
    expect("*** xFFL Distributed Setup ***" in one and "Receives from\t\t5\n" in one, "--rank 3 prints its state")
    # A big world: every rank gets its row, group columns stay compact (past 256 ranks: no picture).
    world = 1024 if SANITIZED else 65536
    big = run("--world", world, "--federated", world // 4, "--hsdp", 4).stdout.splitlines()
    expect(big[-1].split()[0] == str(world - 1) and len(big) > world, f"{world} rows expected")
    expect("mesh pictures are left out" in "\n".join(big[:12]), "big worlds say why there is no picture")


def svg_tree(*args):
    text = run(*args, "--format", "svg").stdout
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise Failure(f"svg for {args} is not well-formed XML: {e}")
    return text, root


def by_class(root, name):
    return [e for e in root.iter() if name in e.get("class", "").split()]


def case_svg():
    ns = "{http://www.w3.org/2000/svg}"
    text, root = svg_tree("--world", 12, "--federated", "4,8", "--hsdp", 2)
    expect(root.tag == ns + "svg", f"root is {root.tag}")
    expect(root.find(ns + "title") is not None, "svg has a title")
    facilities = by_class(root, "facility")
    expect(sorted(e.get("data-facility") for e in facilities) == ["0", "1"], "one box per facility")
    senders = sorted(int(e.get("data-rank")) for e in by_class(root, "sender"))
    expect(senders == [0, 3, 4, 7], f"sender marks on {senders}")
    expect(len(by_class(root, "rank")) == 12, "one cell per rank")
    expect(len(by_class(root, "lane")) == 2, "one bus per FEDERATED group [0,4], [3,7]")
    # Highlight, symmetric, plain and many facilities must all be valid XML too.
    for args in (["--world", 16, "--node-size", 4, "--federated", 8, "--hsdp", 4, "--rank", 5],
                 ["--world", 8, "--federated", 4], ["--world", 8, "--hsdp", 2], ["--world", 12],
                 ["--world", 64, "--federated", 2]):
        svg_tree(*args)
    # Big world: the summary view says so and still draws every facility's box.
    text, root = svg_tree("--world", 4096, "--federated", "1024,3072", "--hsdp", 4)
    expect("Summary view" in text, "a summarized picture says it is one")
    expect(len(by_class(root, "facility")) == 2, "summary: one box per facility")
    expect(len(by_class(root, "rank")) <= 2 * 64, "summary: only the corner of each mesh is drawn")
    # Very many facilities: the left-out ones are shown as one box.
    sizes = ",".join(["4"] * 100)
    text, root = svg_tree("--world", 400, "--federated", sizes, "--hsdp", 2)
    expect(len(by_class(root, "left-out")) == 1 and len(by_class(root, "facility")) == 5, "facilities left out")


def case_dot():
    dot = shutil.which("dot")
    if not dot:
        print("SKIPPED: graphviz 'dot' not found")
        return SKIPPED
    for args in (["--world", 12, "--federated", "4,8", "--hsdp", 2], ["--world", 16, "--node-size", 4, "--federated", 8, "--hsdp", 4, "--rank", 3],
                 ["--world", 8], ["--world", 4096, "--federated", "1024,3072", "--hsdp", 4]):
        source = run(*args, "--format", "dot").stdout
        proc = subprocess.run([dot, "-Tsvg"], input=source, capture_output=True, text=True, timeout=60)
        expect(proc.returncode == 0 and not proc.stderr.strip(), f"dot rejects the source for {args}: {proc.stderr}")
        ET.fromstring(proc.stdout)
    source = run("--world", 12, "--federated", "4,8", "--hsdp", 2, "--format", "dot").stdout
    expect(source.count("subgraph cluster_facility_") == 2, "one cluster per facility")
    expect("r0 -> r4 [dir=none" in source and "r3 -> r7 [dir=none" in source, "cross-facility edges")
    expect("r3 -> r1 [color" in source, "receive_from edge of rank 1")


def case_output_file():
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "plan.svg")
        proc = run("--world", 8, "--federated", "2,6", "--hsdp", 2, "--format", "svg", "--output", path)
        expect(proc.stdout == "", "--output leaves stdout empty")
        with open(path) as f:
            ET.fromstring(f.read())
        expect_one_error_line(run("--world", 8, "--output", os.path.join(tmp, "no", "such", "dir"), rc=2))


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    name = sys.argv[1]
    try:
        result = CASES[name]()
    except Failure as e:
        print(f"FAIL {name}: {e}")
        sys.exit(1)
    sys.exit(result or 0)
