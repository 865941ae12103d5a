#!/usr/bin/env python3
"""xffl against its peers on this machine, side by side (issues 3 and 13's benchmark).

1. allreduce, f32, 4 KiB .. 256 MiB (x4) on 2 and 4 ranks: busbw of xffl-bench (UCX backend, under
   xffl-run), Open MPI (mpirun) and PyTorch's gloo (/usr/bin/python3, N processes started here as
   torchrun would), plus a single-thread memcpy of 64 MiB as this machine's limit and a cross-core
   exchange probe (1 MiB each way between two CPUs: the machine's state) right before and after each
   run; the median of --repeat runs, the load average at each run, CPU per call (the load-independent
   figure) and the ratios xffl/MPI. With --baseline-build-dir, the xffl-bench of another build (the tree
   before a change) runs interleaved with this one, as "before". Goals (issue 13): busbw >= MPI at every size,
   >= 1.5x at 64 MiB, CPU per call <= MPI's, 64 MiB on 2 ranks >= 50% of the memcpy probe.
2. Time until every group of a federated HSDP layout (8 ranks, --federated 2,6 --hsdp 2) is usable:
   xffl_state_from_env + one barrier per group kind, against gloo's init_process_group + new_group for
   the same member lists + the same barriers. Goal: xffl >= 10x faster.

Same sizes, iteration counts and timing rule for everyone (a barrier, then ITERS back-to-back calls;
each rank's time per call, mean over ranks; busbw = algbw * 2(n-1)/n); small sizes take more calls, so
that the timed calls of each size move at least --min-bytes (256 MiB: 1000 calls from 4 to 256 KiB, 256
of 1 MiB, 64 of 4 MiB, 16 of 16 MiB; timed calls that take a few milliseconds in all are at the mercy of
one wake-up or one other process on the 2 cores), in launches of their own. No process is pinned: xffl-run
does not pin, so mpirun runs with --bind-to none and torch with one intra-op thread; with --bind every
contestant's rank r runs on CPU r mod CPUs (taskset, the same for all), so that no run depends on where
the scheduler happened to put the ranks (see README, "Where 4 ranks land"). The machine is
shared, so each cell is run --repeat times, interleaved across implementations, and the median is
shown (the best is in --verbose). Writes nothing but the build directory (and --save); prints the tables.

usage: compare.py [--build-dir DIR] [--baseline-build-dir DIR] [--iters N] [--warmup N] [--repeat R]
                  [--ranks 2,4] [--ucx-tls TLS] [--no-gloo] [--skip-groups] [--boost] [--malloc-thp] [--bind]
                  [--skip-build] [--verbose] [--save FILE] [--against FILE ...]

--save writes this run's ratios (JSON); --against compares them cell by cell with an earlier run's
(drift.py: issue 13's "the same ratios within 10% on another day").
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import drift

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
MIB = 1 << 20
KIB = 1 << 10
SIZES = [4 * KIB * 4 ** k for k in range(9)]  # 4 KiB .. 256 MiB
RANKS = [2, 4]
TORCH_PYTHON = "/usr/bin/python3"  # Debian's python3-torch
BOUND_S = 300  # no single launch may take longer than this
MOST_CALLS = 1000  # timed calls at one size, at most (calls_at)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build-dir", default=os.path.join(SOURCE, "build-bench"))
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--min-bytes", type=int, default=256 * MIB,
                   help="at small sizes, time enough calls to move at least this many bytes (at most 1000 calls, "
                        "at least --iters; warmup a tenth of them, at least --warmup); 0: --iters at every size")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--ranks", default="2,4", help="rank counts, comma-separated")
    p.add_argument("--baseline-build-dir", default=None,
                   help="a build of another tree (configured like --build-dir, xffl-run and xffl-bench built): its "
                        "xffl-bench runs interleaved with this one's as 'before'")
    p.add_argument("--no-gloo", action="store_true", help="leave gloo out (its 256 MiB runs are long)")
    p.add_argument("--skip-groups", action="store_true", help="leave out the time-to-usable-groups part")
    p.add_argument("--ucx-tls", default=None,
                   help="UCX_TLS for xffl (default: leave UCX's own choice, which picks shared memory on one host)")
    p.add_argument("--boost", action="store_true",
                   help="raise this session's autogroup priority (nice -10) while measuring, so that the runs "
                        "compete less with other work on a shared machine; restored at exit (Linux, root)")
    p.add_argument("--malloc-thp", action="store_true",
                   help="every contestant (and the memcpy probe) runs with GLIBC_TUNABLES=glibc.malloc.hugetlb=1: "
                        "malloc backs its large blocks with transparent huge pages (see README, 'Page faults')")
    p.add_argument("--bind", action="store_true",
                   help="every contestant's rank r on CPU r mod CPUs (taskset), the same for all (see README, "
                        "'Where 4 ranks land'); without it nothing is pinned")
    p.add_argument("--max-size", default="256M",
                   help="largest size measured (4K, 16K, ... 256M): the small sizes alone take minutes, not ten")
    p.add_argument("--skip-build", action="store_true")
    p.add_argument("--save", metavar="FILE", help="write this run's ratios as JSON (drift.py's format)")
    p.add_argument("--against", metavar="FILE", action="append", default=[],
                   help="a run's ratios (JSON, drift.py's format) to compare this run with, cell by cell; "
                        "repeatable (bench/peers/reference/ holds earlier runs)")
    p.add_argument("--verbose", action="store_true")
    return p.parse_args()


def log(args, text):
    if args.verbose:
        print(text, file=sys.stderr, flush=True)


def build(args):
    targets = ["xffl-run", "xffl-bench", "xffl-topo", "memcpy_probe", "exchange_probe", "xffl_groups_ready",
               "mpi_allreduce"]
    if not os.path.exists(os.path.join(args.build_dir, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", SOURCE, "-B", args.build_dir, "-DCMAKE_BUILD_TYPE=Release"], check=True,
                       stdout=subprocess.DEVNULL)
    else:
        subprocess.run(["cmake", args.build_dir], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", args.build_dir, "-j2", "--target", *targets], check=True,
                   stdout=subprocess.DEVNULL)


def tool(args, *parts):
    return os.path.join(args.build_dir, *parts)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_json(cmd, env=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=BOUND_S)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def torch_env(rank, n, port):
    env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(n), LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(n),
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)  # Debian's torch, not whatever a virtualenv adds
    return env


def launch_torch(script, n, script_args, args=None):
    """Start n ranks of a python script as torchrun would; return their stdout lines (rank order). With
    args (compare.py's), --bind applies."""
    port = free_port()
    command = [TORCH_PYTHON, os.path.join(HERE, script), *script_args]
    procs = [subprocess.Popen(bound(args, command, "RANK") if args else command,
                              env=torch_env(r, n, port), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(n)]
    outputs, failed = [], None
    deadline = time.monotonic() + BOUND_S
    for r, p in enumerate(procs):
        try:
            out, err = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise RuntimeError(f"{script} rank {r} did not finish within {BOUND_S} s")
        if p.returncode != 0 and failed is None:
            failed = f"{script} rank {r} exited {p.returncode}:\n{err}"
        outputs.append(out)
    if failed:
        raise RuntimeError(failed)
    return outputs


def bound(args, cmd, rank_variable):
    """cmd, run on CPU (rank mod CPUs) with --bind; the rank is read from rank_variable in its environment."""
    if not args.bind:
        return cmd
    return ["sh", "-c", f'exec taskset -c $(( ${rank_variable} % {os.cpu_count()} )) "$@"', "sh", *cmd]


def xffl_env(args):
    env = dict(os.environ)
    if args.ucx_tls is not None:
        env["UCX_TLS"] = args.ucx_tls
    return env


# --- 1. allreduce busbw -------------------------------------------------------------------------
def calls_at(args, size):
    """(timed, warmup) calls at this size: --iters and --warmup, more for small sizes so that the timed
    calls move at least --min-bytes (at most MOST_CALLS of them): 10 calls of 4 KiB are tens of
    microseconds, less than one wake-up of a sleeping rank on this VM."""
    timed = max(args.iters, min(MOST_CALLS, -(-args.min_bytes // size)))
    return timed, max(args.warmup, timed // 10)


def size_runs(args):
    """[first, last, (timed, warmup)]: one launch per run of consecutive sizes that take the same calls."""
    runs = []
    for size in SIZES:
        calls = calls_at(args, size)
        if runs and runs[-1][2] == calls:
            runs[-1][1] = size
        else:
            runs.append([size, size, calls])
    return runs


def each_size_run(args, launch):
    """launch(the tools' size arguments) -> {size: (busbw, cpu_us)} for each run of sizes, merged."""
    merged = {}
    for first, last, (timed, warmup) in size_runs(args):
        merged.update(launch(["-b", str(first), "-e", str(last), "-f", "4", "-n", str(timed), "-w", str(warmup)]))
    return merged


def busbw_by_size(doc):
    """size -> (busbw GB/s, CPU us per call, mean over ranks)"""
    return {r["size"]: (r["busbw_gbps"], r["cpu_us"]) for r in doc["results"] if r["size"] in SIZES}


XFFL_SPLIT = {}  # (ranks, size) -> [(time_us, cpu_us, runqueue_us)] from xffl-bench's --json


def remember_split(n, doc):
    for r in doc["results"]:
        if r["size"] in SIZES and r.get("runqueue_us") is not None:
            XFFL_SPLIT.setdefault((n, r["size"]), []).append((r["time_us"], r["cpu_us"], r["runqueue_us"]))


def xffl_allreduce(args, n, build_dir=None):
    build_dir = build_dir or args.build_dir

    def launch(size_args):
        cmd = [os.path.join(build_dir, "tools/xffl-run/xffl-run"), "-n", str(n), "--backend", "ucx", "--timeout",
               "120", "--max-time", str(BOUND_S), "--no-tag-output", "--",
               *bound(args, [os.path.join(build_dir, "tools/xffl-bench/xffl-bench"), "-o", "allreduce", "-d", "f32",
                             *size_args, "--json"], "RANK")]
        doc = json.loads(run_json(cmd, xffl_env(args)))
        if build_dir == args.build_dir:
            remember_split(n, doc)
        return busbw_by_size(doc)

    return each_size_run(args, launch)


def xffl_before_allreduce(args, n):
    return xffl_allreduce(args, n, args.baseline_build_dir)


def mpi_allreduce(args, n):
    exe = tool(args, "bench/peers/mpi_allreduce")
    if not os.path.exists(exe) or not shutil.which("mpirun"):
        return None

    def launch(size_args):
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", str(n),
               *bound(args, [exe, *size_args], "OMPI_COMM_WORLD_RANK")]
        return busbw_by_size(json.loads(run_json(cmd)))

    return each_size_run(args, launch)


def gloo_allreduce(args, n):
    return each_size_run(args, lambda size_args: busbw_by_size(
        json.loads(launch_torch("gloo_allreduce.py", n, size_args, args)[0])))


def machine():
    """What this run ran on: the CPU (model name, family and model from /proc/cpuinfo), the kernel, and
    when this machine booted (UTC): runs of one booted machine share its host, others may not."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
        with open("/proc/stat") as f:
            boot = next((int(line.split()[1]) for line in f if line.startswith("btime ")), None)
    except OSError:
        boot = None
    booted = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(boot)) if boot is not None else "unknown"
    return (f"{fields.get('model name', 'unknown CPU')} (family {fields.get('cpu family', '?')}, model "
            f"{fields.get('model', '?')}), {os.cpu_count()} CPUs, Linux {os.uname().release}, booted {booted}")


def exchange_probe(args):
    """GB/s read across per core when two threads on two CPUs take turns through 1 MiB of shared memory
    (exchange_probe.c), or None (fewer than two CPUs; a build without the probe)."""
    exe = tool(args, "bench/peers/exchange_probe")
    if not os.path.exists(exe):
        return None
    return json.loads(run_json([exe, "-s", "1024", "-n", "200", "-w", "20"]))["exchange_gbps"]


def memcpy_probe(args):
    """(best GB/s, mean GB/s, us per page fault of a fresh 64 MiB malloc block) of one probe run."""
    doc = json.loads(run_json([tool(args, "bench/peers/memcpy_probe"), "-s", "64", "-n", "20", "-w", "3"]))
    return doc["best_gbps"], doc["mean_gbps"], doc.get("fault_us_per_page")


def memcpy_probe_two_cores(args):
    """Mean GB/s per core when both cores copy at once: two memcpy probes started together, one pinned on
    CPU 0 and one on CPU 1, each's mean over 60 copies (their starts apart by milliseconds, against
    about 0.3 s of copying each), averaged; None with fewer than two CPUs. The memory rate that two ranks
    of an allreduce share, where the one-core probe is what one rank would get alone."""
    if (os.cpu_count() or 1) < 2 or not shutil.which("taskset"):
        return None
    exe = tool(args, "bench/peers/memcpy_probe")
    procs = [subprocess.Popen(["taskset", "-c", str(cpu), exe, "-s", "64", "-n", "60", "-w", "3"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for cpu in (0, 1)]
    try:
        means = []
        for proc in procs:
            out, err = proc.communicate(timeout=BOUND_S)
            if proc.returncode != 0:
                raise RuntimeError(f"memcpy_probe on two cores exited {proc.returncode}:\n{out}\n{err}")
            means.append(json.loads(out)["mean_gbps"])
        return statistics.mean(means)
    finally:
        for proc in procs:  # none left behind when one failed or ran past BOUND_S
            if proc.poll() is None:
                proc.kill()
                proc.wait()


# --- 2. time to usable groups -------------------------------------------------------------------
FEDERATED, HSDP, WORLD8 = "2,6", 2, 8


def group_plan(args, kinds):
    """Every group of each kind, from xffl-topo's plan of all ranks (the same lists xffl builds)."""
    out = run_json([tool(args, "tools/xffl-topo/xffl-topo"), "--world", str(WORLD8), "--federated", FEDERATED,
                    "--hsdp", str(HSDP), "--format", "json"])
    ranks = json.loads(out)

    def column(mesh, r):
        for row in mesh:
            if r in row:
                j = row.index(r)
                return [other[j] for other in mesh]

    def row(mesh, r):
        for members in mesh:
            if r in members:
                return members

    per_rank = {
        "WORLD": lambda s: list(range(WORLD8)),
        "FSDP": lambda s: s["fsdp_mesh"],
        "HSDP_REPLICA": lambda s: column(s["hsdp_mesh"], s["rank"]),
        "HSDP_SHARD": lambda s: row(s["hsdp_mesh"], s["rank"]),
        "FEDERATED": lambda s: s["federated_group"],
        "REPLICA": lambda s: s["replica_group"],
        "FEDERATION": lambda s: s["federation"],
    }
    plan = {}
    for kind in kinds:
        lists = []
        for s in ranks:
            members = per_rank[kind](s)
            if members and members not in lists:
                lists.append(members)
        plan[kind] = lists
    return plan


def ready_times(lines, t0_ns):
    stamps = [json.loads(l) for l in lines if l.startswith("{")]
    if len(stamps) != WORLD8:
        raise RuntimeError(f"expected {WORLD8} stamp lines, got {len(stamps)}")
    return {
        "launch": max(s["ready_ns"] for s in stamps) - t0_ns,
        "main": max(s["ready_ns"] - s["main_ns"] for s in stamps),
        "init": max(s["ready_ns"] - s["init_ns"] for s in stamps),
        "kinds": stamps[0]["kinds"],
        "groups_created": stamps[0].get("groups_created"),
    }


def xffl_groups(args):
    cmd = [tool(args, "tools/xffl-run/xffl-run"), "-n", str(WORLD8), "--federated", FEDERATED, "--hsdp", str(HSDP),
           "--backend", "ucx", "--timeout", "120", "--max-time", str(BOUND_S), "--no-tag-output", "--",
           tool(args, "bench/peers/xffl_groups_ready")]
    t0 = time.time_ns()
    out = run_json(cmd, xffl_env(args))
    return ready_times(out.splitlines(), t0)


def gloo_groups(args, plan_file):
    t0 = time.time_ns()
    outputs = launch_torch("gloo_groups_ready.py", WORLD8, [plan_file])
    return ready_times([l for out in outputs for l in out.splitlines()], t0)


# --- report -------------------------------------------------------------------------------------
def best(values):
    values = [v for v in values if v is not None]
    return max(values) if values else None


def least(values):
    values = [v for v in values if v is not None]
    return min(values) if values else None


def fmt(v, width=9, digits=2):
    return f"{v:{width}.{digits}f}" if v is not None else f"{'n/a':>{width}}"


def probes_text(pair):
    return "/".join(fmt(v, 0, 1) for v in pair)


def ratio(a, b):
    return a / b if a is not None and b else None


class AutogroupBoost:
    """nice -10 for this session's autogroup (what `nice` cannot do across sessions when the kernel groups
    scheduling by session); the old value comes back on exit."""

    PATH = "/proc/self/autogroup"

    def __init__(self, wanted):
        self.wanted, self.old = wanted, None

    def __enter__(self):
        if self.wanted:
            try:
                with open(self.PATH) as f:
                    self.old = int(f.read().split("nice")[1])
                with open(self.PATH, "w") as f:
                    f.write("-10")
            except (OSError, IndexError, ValueError) as e:
                print(f"note: --boost unavailable ({e}); measuring at normal priority")
                self.old = None
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            with open(self.PATH, "w") as f:
                f.write(str(self.old))


def calls_text(args):
    """'1000 calls (+100 warmup) at 4 KiB .. 16 KiB, ...' for the table's heading."""
    parts = []
    for first, last, (timed, warmup) in size_runs(args):
        sizes = size_name(first) if first == last else f"{size_name(first)} .. {size_name(last)}"
        parts.append(f"{timed} calls (+{warmup} warmup) at {sizes}")
    return ", ".join(parts)


def limit_sizes(args):
    units = {"K": KIB, "M": MIB}
    text = args.max_size.upper()
    largest = int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
    SIZES[:] = [size for size in SIZES if size <= largest]
    if not SIZES:
        raise SystemExit(f"--max-size {args.max_size}: no size of 4 KiB .. 256 MiB (x4) is that small")


def main():
    args = parse_args()
    limit_sizes(args)
    if args.malloc_thp:  # every child inherits os.environ: xffl-run, mpirun, torch's ranks, the probe
        tunables = [t for t in os.environ.get("GLIBC_TUNABLES", "").split(":") if t]
        os.environ["GLIBC_TUNABLES"] = ":".join(tunables + ["glibc.malloc.hugetlb=1"])
    if not args.skip_build:
        build(args)
    with AutogroupBoost(args.boost) as boost:
        measure(args, boosted=boost.old is not None)


def size_name(size):
    return f"{size // MIB} MiB" if size >= MIB else f"{size // KIB} KiB"


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


IMPLS = ("xffl", "before", "mpi", "gloo")


def run_ratios(args, ranks, samples, cpu, share, memcpy_gbps, fault_us, exchange_gbps, host, two_cores_gbps):
    """This run's ratios in drift.py's format: busbw xffl/MPI and CPU MPI/xffl by rank count and size, each
    side's busbw, the machine (host: machine()) and its probes (exchange_gbps: every cross-core probe of
    the run; two_cores_gbps: memcpy_probe_two_cores, median of the run's)."""
    def table(of):
        return {str(n): {size_name(s): of(n, s) for s in SIZES} for n in ranks}
    return {
        "busbw_xffl": table(lambda n, s: median(samples[("xffl", n, s)])),
        "busbw_mpi": table(lambda n, s: median(samples[("mpi", n, s)])),
        "memcpy_best_gbps": memcpy_gbps,
        "fault_us_per_page": fault_us,
        "memcpy_two_cores_mean_gbps": two_cores_gbps,
        "machine": host,
        "exchange_gbps": median(exchange_gbps),
        "exchange_gbps_range": [min(exchange_gbps), max(exchange_gbps)] if exchange_gbps else None,
        "label": f"compare.py at {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, --repeat {args.repeat} "
                 f"--iters {args.iters} --warmup {args.warmup}{' --bind' if args.bind else ''}",
        "busbw_xffl_over_mpi": table(lambda n, s: ratio(median(samples[("xffl", n, s)]), median(samples[("mpi", n, s)]))),
        "cpu_mpi_over_xffl": table(lambda n, s: ratio(median(cpu[("mpi", n, s)]), median(cpu[("xffl", n, s)]))),
        "memcpy_share": share,
    }


def compare_with_earlier_runs(args, ratios):
    if args.save:
        with open(args.save, "w") as f:
            json.dump(ratios, f, indent=1)
            f.write("\n")
    for path in args.against:
        with open(path) as f:
            drift.report(json.load(f), ratios)


def measure(args, boosted):
    ranks = [int(r) for r in args.ranks.split(",")]
    have_torch = not args.no_gloo and subprocess.run([TORCH_PYTHON, "-c", "import torch.distributed"],
                                                     capture_output=True).returncode == 0
    if not have_torch and not args.no_gloo:
        print(f"note: {TORCH_PYTHON} cannot import torch (apt-get install -y python3-torch): gloo columns are n/a")

    impls = {"xffl": xffl_allreduce}
    if args.baseline_build_dir:
        impls["before"] = xffl_before_allreduce
    impls["mpi"] = mpi_allreduce
    if have_torch:
        impls["gloo"] = gloo_allreduce
    samples = {(impl, n, size): [] for impl in IMPLS for n in ranks for size in SIZES}
    cpu = {key: [] for key in samples}
    loads = {(impl, n): [] for impl in IMPLS for n in ranks}
    # The cross-core probe right before and right after each run: (before, after).
    exchange = {(impl, n): [] for impl in IMPLS for n in ranks}
    memcpy_best, memcpy_mean, fault_us, memcpy_two_cores = [], [], [], []
    for rep in range(args.repeat):
        for n in ranks:
            # Interleaved, so that the machine's moods hit everyone alike, and in an order that turns
            # by one each run, so that none always runs right after the same one.
            order = list(impls.items())
            order = order[rep % len(order):] + order[:rep % len(order)]
            for impl, run in order:
                loads[(impl, n)].append(os.getloadavg()[0])
                probe_before = exchange_probe(args)
                got = run(args, n)
                exchange[(impl, n)].append((probe_before, exchange_probe(args)))
                log(args, f"rep {rep} {impl} n={n} load {loads[(impl, n)][-1]:.1f} exchange probe "
                          f"{probes_text(exchange[(impl, n)][-1])} GB/s: {got}")
                for size in SIZES:
                    busbw, cpu_us = got.get(size, (None, None)) if got else (None, None)
                    samples[(impl, n, size)].append(busbw)
                    cpu[(impl, n, size)].append(cpu_us)
        b, m, f = memcpy_probe(args)
        memcpy_best.append(b)
        memcpy_mean.append(m)
        fault_us.append(f)
        memcpy_two_cores.append(memcpy_probe_two_cores(args))

    tls = args.ucx_tls if args.ucx_tls is not None else os.environ.get("UCX_TLS", "(UCX default)")
    shown = [impl for impl in IMPLS if impl in impls]
    print(f"\n## allreduce f32, busbw in GB/s (1e9 B/s), median of {args.repeat} runs; "
          f"{calls_text(args)}; xffl UCX_TLS={tls}")
    host = machine()
    print(f"machine: {host}")
    print(f"{'autogroup nice -10 (--boost)' if boosted else 'normal priority'}, "
          f"{'malloc on huge pages (--malloc-thp)' if args.malloc_thp else 'malloc as configured'}, "
          f"{'rank r on CPU r mod CPUs (--bind)' if args.bind else 'nothing pinned'}; "
          "load average (1 min) at the start of each run:")
    for n in ranks:
        for impl in shown:
            print(f"  {n} ranks {impl:6s}: " + " ".join(f"{v:.1f}" for v in loads[(impl, n)]))
    print("cross-core exchange probe (1 MiB each way between two CPUs, GB/s) right before / after each run; "
          "it moves about 4x with where the host places the two CPUs, and can within seconds (README, "
          "'Two states of the machine'):")
    for n in ranks:
        for impl in shown:
            print(f"  {n} ranks {impl:6s}: " + " ".join(probes_text(pair) for pair in exchange[(impl, n)]))
    print(f"memcpy probe (1 thread, 64 MiB): median of best {median(memcpy_best):.2f} GB/s, best "
          f"{max(memcpy_best):.2f}, mean {statistics.mean(memcpy_mean):.2f} GB/s; a page fault (fresh 64 MiB from "
          f"malloc): {fmt(median(fault_us), 0)} us, median of the runs\n")
    header = " | ".join(f"{impl:>8s}" for impl in shown)
    print(f"| ranks |    size | {header} | xffl/MPI | xffl/before | xffl/memcpy |")
    print("|------:|--------:|" + "---------:|" * len(shown) + "---------:|------------:|------------:|")
    for n in ranks:
        for size in SIZES:
            v = {impl: median(samples[(impl, n, size)]) for impl in shown}
            cells = " | ".join(fmt(v[impl], 8) for impl in shown)
            print(f"| {n:5d} | {size_name(size):>7s} | {cells} | {fmt(ratio(v['xffl'], v.get('mpi')), 8)} |"
                  f" {fmt(ratio(v['xffl'], v.get('before')), 11)} | {fmt(ratio(v['xffl'], median(memcpy_best)), 11)} |")
    print(f"\nCPU time per call (us, user + system of every thread, mean over ranks, median of {args.repeat} runs)\n")
    print(f"| ranks |    size | {header} | MPI/xffl | before/xffl |")
    print("|------:|--------:|" + "---------:|" * len(shown) + "---------:|------------:|")
    for n in ranks:
        for size in SIZES:
            v = {impl: median(cpu[(impl, n, size)]) for impl in shown}
            cells = " | ".join(fmt(v[impl], 8, 0) for impl in shown)
            print(f"| {n:5d} | {size_name(size):>7s} | {cells} | {fmt(ratio(v.get('mpi'), v['xffl']), 8)} |"
                  f" {fmt(ratio(v.get('before'), v['xffl']), 11)} |")
    if args.verbose:
        print("\nbest of the runs (GB/s):")
        for n in ranks:
            for size in SIZES:
                print(f"  {n} ranks {size_name(size)}: " +
                      ", ".join(f"{impl} {fmt(best(samples[(impl, n, size)]), 0)}" for impl in shown))
    print("\nwhere xffl's time per call goes (best run by wall time; mean over ranks, ms): wall = CPU + waiting "
          "for a CPU (run queue) + asleep waiting for peers")
    for (n, size), runs in sorted(XFFL_SPLIT.items()):
        wall, cpu_us, runqueue = min(runs)
        print(f"  {n} ranks {size_name(size):>7s}: wall {wall / 1e3:7.2f} = CPU {cpu_us / 1e3:7.2f} + run queue "
              f"{runqueue / 1e3:7.2f} + asleep {max(0.0, wall - cpu_us - runqueue) / 1e3:6.2f}")
    verdict = lambda r, goal: "n/a" if r is None else ("met" if r >= goal else "MISSED")  # noqa: E731
    for n in ranks:
        worst = min((ratio(median(samples[("xffl", n, s)]), median(samples[("mpi", n, s)])) or 0) for s in SIZES)
        at64 = ratio(median(samples.get(("xffl", n, 64 * MIB), [])), median(samples.get(("mpi", n, 64 * MIB), [])))
        cpu_worst = min((ratio(median(cpu[("mpi", n, s)]), median(cpu[("xffl", n, s)])) or 0) for s in SIZES)
        print(f"goals, {n} ranks: busbw xffl/MPI lowest {worst:.2f} (>= 1 at every size: {verdict(worst, 1)}), "
              f"64 MiB {fmt(at64, 0)} (>= 1.5: {verdict(at64, 1.5)}), CPU MPI/xffl lowest {cpu_worst:.2f} "
              f"(>= 1: {verdict(cpu_worst, 1)})")
    share = ratio(median(samples.get(("xffl", 2, 64 * MIB), [])), median(memcpy_best)) if 2 in ranks else None
    print(f"goal 64 MiB, 2 ranks: xffl busbw / memcpy probe = {fmt(share, 0)} (>= 0.5: {verdict(share, 0.5)})")
    # xffl's figure is a mean over its calls, the probe's the best of its copies: the mean against the
    # mean too, for information (the goal stays the line above).
    mean_share = ratio(median(samples.get(("xffl", 2, 64 * MIB), [])), median(memcpy_mean)) if 2 in ranks else None
    print(f"  (against the probe's mean copy, median over the runs: {fmt(mean_share, 0)})")
    # What two ranks can have at most: both cores copying at once share the memory's rate. Each rank of
    # a 2-rank allreduce moves at least one copy of the buffer through memory (its input in, its output
    # out), so this is the ceiling of xffl's 64 MiB busbw on 2 ranks, for information.
    two_cores = median(memcpy_two_cores)
    if two_cores is not None and 2 in ranks:
        print(f"  (memcpy on both cores at once: {two_cores:.2f} GB/s per core, median of the runs, "
              f"{fmt(ratio(two_cores, median(memcpy_mean)), 0)} of one core's mean copy alone; xffl's 64 MiB "
              f"on 2 ranks against it: {fmt(ratio(median(samples.get(('xffl', 2, 64 * MIB), [])), two_cores), 0)})")
    probes = [v for pairs in exchange.values() for pair in pairs for v in pair if v is not None]
    compare_with_earlier_runs(args, run_ratios(args, ranks, samples, cpu, share, median(memcpy_best),
                                               median(fault_us), probes, host, two_cores))
    if args.skip_groups:
        return

    # time to usable groups
    xffl_runs, gloo_runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeat):
            xr = xffl_groups(args)
            xffl_runs.append(xr)
            log(args, f"rep {rep} xffl groups: {xr}")
            if have_torch:
                plan_file = os.path.join(tmp, "plan.json")
                with open(plan_file, "w") as f:
                    json.dump(group_plan(args, xr["kinds"]), f)
                gr = gloo_groups(args, plan_file)
                gloo_runs.append(gr)
                log(args, f"rep {rep} gloo groups: {gr}")
    print(f"\n## time until every group is usable, {WORLD8} ranks, --federated {FEDERATED} --hsdp {HSDP} "
          f"(max over ranks, best of {args.repeat}, ms)")
    print(f"kinds with one barrier each: {', '.join(xffl_runs[0]['kinds'])}"
          + (f"; gloo new_group calls: {gloo_runs[0]['groups_created']} distinct member lists" if gloo_runs else ""))
    print("\n| measured from                                  |   xffl |    gloo | gloo/xffl |")
    print("|------------------------------------------------|-------:|--------:|----------:|")
    for key, label in [("launch", "before launching (launcher + exec + imports)"),
                       ("main", "process main (C main / python first line)"),
                       ("init", "init call (state_from_env / init_pg)")]:
        xv = min(r[key] for r in xffl_runs) / 1e6
        gv = min(r[key] for r in gloo_runs) / 1e6 if gloo_runs else None
        print(f"| {label:46s} | {xv:6.1f} | {fmt(gv, 7, 1)} | {fmt(ratio(gv, xv), 9, 1)} |")
    if gloo_runs:
        for key, label in [("launch", "before launching"), ("main", "process start")]:
            r = ratio(min(g[key] for g in gloo_runs), min(x[key] for x in xffl_runs))
            print(f"goal, from {label}: gloo/xffl = {r:.1f} (goal >= 10: {verdict(r, 10)})")


if __name__ == "__main__":
    main()
