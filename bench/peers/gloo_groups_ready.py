"""Time to usable groups with PyTorch's gloo, the way xFFL's Python DistributedState gets them:
init_process_group("gloo") and then new_group for every group of the layout (every rank calls new_group
for every group, members or not, as torch requires), then one barrier on this rank's group of every kind.

Launched like torchrun would (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT in the environment) by
compare.py; argv[1] is a JSON file {kind: [[members], ...]} written from xffl-topo's plan, so both sides
build exactly the same groups. Each distinct member list is created once and reused by every kind that
has it (the cheapest gloo can do). Prints one JSON line per rank with CLOCK_REALTIME stamps in ns:
{"rank", "main_ns", "init_ns", "ready_ns", "kinds", "groups_created"}.
"""
import time

main_ns = time.time_ns()  # first statement: before the interpreter imports anything of ours

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

torch.set_num_threads(1)
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
with open(sys.argv[1]) as f:
    plan = json.load(f)

init_ns = time.time_ns()
dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)
created = {}
mine = {}
for kind, lists in plan.items():  # same order on every rank: the file's order
    for members in lists:
        key = tuple(members)
        if key not in created:
            created[key] = dist.new_group(ranks=list(members), backend="gloo")
        if rank in members:
            mine[kind] = created[key]
for kind in plan:
    dist.barrier(group=mine[kind])
ready_ns = time.time_ns()
print(json.dumps({"rank": rank, "main_ns": main_ns, "init_ns": init_ns, "ready_ns": ready_ns,
                  "kinds": list(plan), "groups_created": len(created)}), flush=True)
dist.destroy_process_group()
