#!/usr/bin/env python3
"""Smoke test of xffl-bench on 2 ranks under xffl-run: the nccl-tests style table (columns, one row per
size, counts, checked results, busbw = algbw * factor) and the --json document. Never judges speed.

usage: check_xffl_bench.py XFFL_RUN XFFL_BENCH
"""
import json
import math
import subprocess
import sys

XFFL_RUN, XFFL_BENCH = sys.argv[1], sys.argv[2]
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)


def launch(*bench_args):
    # Every wait is bounded: the library's timeout, xffl-run's --max-time, and subprocess's timeout.
    cmd = [XFFL_RUN, "-n", "2", "--backend", "ucx", "--timeout", "30", "--max-time", "60", "--no-tag-output",
           "--", XFFL_BENCH, *bench_args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    if proc.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc.stdout


def close(a, b):
    return math.isclose(a, b, rel_tol=0.02, abs_tol=0.011)  # the table rounds to 2 decimals


def check_table():
    out = launch("-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "-w", "1", "--check", "--hugepages")
    lines = out.splitlines()
    header = [l for l in lines if l.startswith("#") and "size" in l and "busbw" in l]
    expect(len(header) == 1, f"table: expected one column header line, got {header!r}")
    if header:
        columns = header[0].lstrip("#").split()
        expect(columns == ["size", "count", "type", "redop", "time", "algbw", "busbw", "#wrong"],
               f"table: columns are {columns}")
    rows = [l.split() for l in lines if l.strip() and not l.startswith("#")]
    expect([r[0] for r in rows] == ["1024", "8192", "65536"], f"table: sizes {[r[0] for r in rows]}")
    for r in rows:
        if len(r) != 8:
            expect(False, f"table: row {' '.join(r)!r} does not have 8 columns")
            continue
        size, count, dtype, redop, time_us, algbw, busbw, wrong = r
        expect(int(count) == int(size) // 4, f"table: count {count} for {size} bytes of f32")
        expect((dtype, redop) == ("f32", "sum"), f"table: type/redop {dtype}/{redop}")
        expect(float(time_us) > 0, f"table: time {time_us}")
        # allreduce on 2 ranks: busbw factor 2(n-1)/n = 1
        expect(close(float(busbw), float(algbw)), f"table: busbw {busbw} != algbw {algbw} for n = 2")
        expect(wrong == "0", f"table: {wrong} wrong values at {size} bytes")
    expect(any("Avg bus bandwidth" in l for l in lines), "table: no 'Avg bus bandwidth' footer")


def check_json():
    out = launch("-o", "allgather", "-d", "bf16", "-b", "4K", "-e", "16K", "-f", "2", "-n", "2", "-w", "0",
                 "--check", "--json")
    try:
        doc = json.loads(out)  # rank 0 alone prints, and only the document
    except json.JSONDecodeError as e:
        expect(False, f"json: the --json output does not parse ({e}):\n{out}")
        return
    for key, want in [("tool", "xffl-bench"), ("op", "allgather"), ("dtype", "bf16"), ("redop", "none"),
                      ("backend", "ucx"), ("world_size", 2), ("group", "WORLD"), ("group_size", 2),
                      ("iters", 2), ("warmup", 0), ("check", True)]:
        expect(doc.get(key) == want, f"json: {key} = {doc.get(key)!r}, expected {want!r}")
    expect(close(doc.get("busbw_factor", 0), 0.5), f"json: busbw_factor {doc.get('busbw_factor')} for allgather n = 2")
    results = doc.get("results", [])
    expect([r.get("size") for r in results] == [4096, 8192, 16384], f"json: sizes {[r.get('size') for r in results]}")
    for r in results:
        expect(r.get("count") == r.get("size", 0) // 2, f"json: count {r.get('count')} for {r.get('size')} bytes of bf16")
        expect(r.get("wrong") == 0, f"json: wrong = {r.get('wrong')} at {r.get('size')}")
        expect(r.get("time_us", 0) > 0 and r.get("time_max_us", 0) >= r.get("time_us", 0) * 0.999,
               f"json: time_us {r.get('time_us')} / time_max_us {r.get('time_max_us')}")
        expect(math.isclose(r.get("algbw_gbps", 0), r["size"] / r["time_us"] / 1e3, rel_tol=1e-3),
               f"json: algbw {r.get('algbw_gbps')} is not size / time")
        expect(math.isclose(r.get("busbw_gbps", 0), r.get("algbw_gbps", 0) * 0.5, rel_tol=1e-3),
               f"json: busbw {r.get('busbw_gbps')} is not algbw * 0.5")
    expect("avg_busbw_gbps" in doc, "json: no avg_busbw_gbps")


def check_usage_error():
    proc = subprocess.run([XFFL_BENCH, "-o", "alltoall"], capture_output=True, text=True, timeout=30)
    expect(proc.returncode == 2, f"usage: exit {proc.returncode} for -o alltoall, expected 2")
    expect("xffl-bench: error: -o expects allreduce|broadcast|allgather|reduce_scatter|federated_average"
           in proc.stderr, f"usage: stderr {proc.stderr!r}")


check_table()
check_json()
check_usage_error()
if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("xffl-bench smoke: table, json and usage error as expected")
