"""The peer of `xffl-bench -o allreduce -d f32` with PyTorch's gloo: the same sizes, iteration counts
and timing (a barrier, then ITERS back-to-back all_reduce calls; per-rank time per iteration, mean and
max over ranks, and CPU time per call; busbw = algbw * 2(n-1)/n). torch's all_reduce works in place only. One JSON document
from rank 0, shaped like xffl-bench --json.

Launched like torchrun would (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) by compare.py:
  python3 gloo_allreduce.py -b 1M -e 64M -f 4 -n 20 -w 5
"""
import argparse
import json
import os
import re
import resource
import time

import torch
import torch.distributed as dist


def cpu_seconds():
    """CPU seconds (user + system, every thread: gloo's I/O threads included) of this process."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def size(text):
    m = re.fullmatch(r"(\d+)([KMG]?)B?", text, re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size '{text}'")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


parser = argparse.ArgumentParser()
parser.add_argument("-b", type=size, default=32 << 20)
parser.add_argument("-e", type=size, default=32 << 20)
parser.add_argument("-f", type=float, default=2.0)
parser.add_argument("-n", type=int, default=20)
parser.add_argument("-w", type=int, default=5)
args = parser.parse_args()

torch.set_num_threads(1)  # one core per rank, as the C peers
rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=n)
factor = 2.0 * (n - 1) / n
count_max = args.e // 4
# In-place sums of ones grow as n^(iters+warmup): finite in f32 for any count used here.
buf = torch.ones(count_max, dtype=torch.float32)
results = []
nbytes = args.b
while nbytes <= args.e:
    count = nbytes // 4
    t = buf[:count]
    for _ in range(args.w):
        dist.all_reduce(t)
    dist.barrier()
    cpu_start = cpu_seconds()
    start = time.perf_counter()
    for _ in range(args.n):
        dist.all_reduce(t)
    seconds = (time.perf_counter() - start) / args.n
    cpu = (cpu_seconds() - cpu_start) / args.n
    stats = torch.tensor([seconds, cpu], dtype=torch.float64)
    slowest = stats.clone()
    dist.all_reduce(stats, op=dist.ReduceOp.SUM)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    time_us = stats[0].item() / n * 1e6
    algbw = count * 4 / time_us / 1e3
    results.append({"size": count * 4, "count": count, "time_us": time_us, "time_max_us": slowest[0].item() * 1e6,
                    "cpu_us": stats[1].item() / n * 1e6,
                    "algbw_gbps": algbw, "busbw_gbps": algbw * factor})
    nbytes = max(int(nbytes * args.f), nbytes + 1)
if rank == 0:
    print(json.dumps({"tool": "gloo_allreduce", "op": "allreduce", "dtype": "f32", "redop": "sum", "world_size": n,
                      "busbw_factor": factor, "iters": args.n, "warmup": args.w, "results": results}), flush=True)
dist.destroy_process_group()
