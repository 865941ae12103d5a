#!/usr/bin/env python3
"""This tree against another, one collective at a time, interleaved run by run (issue 13's A/B).

    python3 bench/peers/ab_collectives.py THIS_BUILD BASE_BUILD [--ops broadcast,allgather]
        [--ranks 2,4] [--min 1M] [--max 64M] [--repeat 6] [--bind] [--redop avg] [--datatype f64]

THIS_BUILD and BASE_BUILD are Release builds (targets xffl-run and xffl-bench) of two trees; each
repetition runs every (ranks, op) of both, their order alternating between repetitions. Prints the
load average at the start of each repetition, then per op, ranks and size the medians over the
repetitions of the CPU time per call (user + system of every thread, mean over ranks) and of busbw,
and the ratios base / this (CPU) and this / base (busbw): above 1, this tree is ahead. --bind: rank r
on CPU r mod CPUs (xffl-run --bind core), as compare.py --bind. --redop and --datatype: xffl-bench's
-r and -d (default sum, f32).
"""
import argparse
import collections
import json
import os
import statistics
import subprocess


def run_bench(build, ranks, op, minimum, maximum, bind, redop, datatype):
    cmd = [f"{build}/tools/xffl-run/xffl-run", "-n", str(ranks), "--backend", "ucx",
           *(["--bind", "core"] if bind else []), "--",
           f"{build}/tools/xffl-bench/xffl-bench", "-o", op, "-b", minimum, "-e", maximum, "-f", "4",
           "-n", "10", "-w", "3", "-r", redop, "-d", datatype, "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=True).stdout
    text = "".join(line.split("] ", 1)[1] + "\n" for line in out.splitlines() if line.startswith("[0] "))
    return json.loads(text)["results"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("this_build")
    parser.add_argument("base_build")
    parser.add_argument("--ops", default="broadcast,allgather")
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--min", default="1M")
    parser.add_argument("--max", default="64M")
    parser.add_argument("--repeat", type=int, default=6)
    parser.add_argument("--bind", action="store_true", help="rank r on CPU r mod CPUs (xffl-run --bind core)")
    parser.add_argument("--redop", default="sum", help="xffl-bench -r (sum, avg, min, max, prod)")
    parser.add_argument("--datatype", default="f32", help="xffl-bench -d (f32, f64, f16, bf16, i8, u8, i32, i64)")
    args = parser.parse_args()
    trees = [("this", args.this_build), ("base", args.base_build)]
    ops = args.ops.split(",")
    ranks = [int(n) for n in args.ranks.split(",")]
    data = collections.defaultdict(list)
    loads = []
    for repetition in range(args.repeat):
        loads.append(os.getloadavg()[0])
        for name, build in trees if repetition % 2 == 0 else reversed(trees):
            for n in ranks:
                for op in ops:
                    for row in run_bench(build, n, op, args.min, args.max, args.bind, args.redop, args.datatype):
                        data[(op, n, row["size"], name)].append((row["cpu_us"], row["busbw_gbps"]))
    print("load average (1 min) at the start of each repetition:", " ".join(f"{x:.1f}" for x in loads))
    print(f"{'op':15} {'ranks':>5} {'size':>9} | {'CPU us this':>11} {'base':>9} {'base/this':>9} |"
          f" {'busbw this':>10} {'base':>9} {'this/base':>9}")
    for op in ops:
        for n in ranks:
            for size in sorted({key[2] for key in data if key[0] == op and key[1] == n}):
                this, base = data[(op, n, size, "this")], data[(op, n, size, "base")]
                cpu_this, cpu_base = (statistics.median(x[0] for x in runs) for runs in (this, base))
                bw_this, bw_base = (statistics.median(x[1] for x in runs) for runs in (this, base))
                print(f"{op:15} {n:5} {size:9} | {cpu_this:11.0f} {cpu_base:9.0f} {cpu_base / cpu_this:9.2f} |"
                      f" {bw_this:10.2f} {bw_base:9.2f} {bw_this / bw_base:9.2f}")


if __name__ == "__main__":
    main()
