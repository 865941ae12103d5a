#!/usr/bin/env python3
"""XFFL_FACILITY_FAULTS=continue on loopback: three facility jobs (xffl-run --facility/--federation, 2
ranks each, HSDP 1) and the built-in xffl-federation server, running tests/facilities' check_facility
continue (the harness of tests/facilities/run_continue.py). A benchmark, not a test; no root needed.

usage: bench/facilities/continue_bench.py [BUILD_DIR]     (default build/ci; targets xffl-run,
                                                          xffl-federation, check_facility)
  recovery   SIGKILL of facility 2's whole job between rounds (paced 20 ms apart, 256 values): the time
             from the kill to the next round every survivor rank completed without facility 2, and to
             the first survivor's log line naming it lost, for each lease TTL of TTLS (seconds,
             XFFL_FEDERATION_LEASE_TTL), as ratios to the TTL.
  overhead   no fault: the same rounds (COUNT values, PACE_MS apart) under XFFL_FACILITY_FAULTS=continue and
             =fail, runs alternating; per run, the median over ROUNDS rounds (after WARMUP) of each
             round's time in xffl_federated_average on the rank that waited least (the last to arrive),
             the same among the crossing ranks alone and among the others alone, and the period (from
             the first timed round's end to the last's, per round: what a loop of rounds takes, its
             pause included); the median of REPEATS runs per mode, and continue / fail for each.
             With the built-in server of a build that has `xffl-federation --stats`, each continue run
             also prints the store requests served per round and crossing rank, by type (the whole run's
             requests, bring-up and lease renewals included, over its rounds x 3 crossing ranks).
Environment: PARTS ("recovery overhead"), MODES ("continue fail": the overhead's modes, in this order;
one mode alone prints its runs only, e.g. to profile it), PACE_MS (0: the overhead's pause between a
round's check and the next round's inputs), CHECK_STRIDE (1: the overhead's rounds check every value;
S checks every S-th, so that the ranks done with a round do not take the cores of those still in it:
6 ranks on 2 cores, and checking a 1 MiB round costs each rank far more CPU than the round), TTLS
("1 2 5"), REPEATS (3), COUNT (262144), ROUNDS (40), WARMUP (5), SIZES ("2,2,2": ranks per facility job,
HSDP 1, so job rank 0 crosses and relays to the others; "1,1,1" has no relay), XFFL_TIMEOUT (60), STORE
(xffl: the built-in server; etcd3: three etcd members on loopback, tests/federation's cluster through
BUILD_DIR's federation_etcd_cluster, which needs etcd), FEDERATION_SERVER (the xffl-federation to run; default BUILD_DIR's).
"""
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "facilities"))
import facility_job  # noqa: E402
from facility_job import Job, max_round, wait_for  # noqa: E402
from federation_servers import EtcdCluster, Server, fail  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "ci"))
XFFL_RUN = os.path.join(BUILD, "tools", "xffl-run", "xffl-run")
# FEDERATION_SERVER: another build's xffl-federation (one with --stats counts an older library's requests).
SERVER = os.environ.get("FEDERATION_SERVER") or os.path.join(BUILD, "tools", "xffl-federation", "xffl-federation")
PROGRAM = os.path.join(BUILD, "tests", "facilities", "check_facility")
ETCD_CLUSTER = os.path.join(BUILD, "tests", "federation", "federation_etcd_cluster")
SIZES, HSDP = [int(x) for x in os.environ.get("SIZES", "2,2,2").split(",")], "1"
STORE = os.environ.get("STORE", "xffl")
REPEATS = int(os.environ.get("REPEATS", "3"))
MODES = os.environ.get("MODES", "continue fail").split()
PACE_MS = int(os.environ.get("PACE_MS", "0"))
CHECK_STRIDE = int(os.environ.get("CHECK_STRIDE", "1"))
TIMEOUT = os.environ.get("XFFL_TIMEOUT", "60")


def server_has_stats():
    try:
        return "--stats" in subprocess.run([SERVER, "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False


class StatsServer(Server):
    """xffl-federation --stats: stop() keeps the line of the requests it served."""

    def __init__(self, server, secret):
        env = dict(os.environ, XFFL_AUTH_TOKEN=secret)
        self.process = subprocess.Popen([server, "--listen", "127.0.0.1:0", "--stats"], stdout=subprocess.PIPE,
                                        env=env, text=True)
        found = re.search(r"listening on (\S+)", self.process.stdout.readline())
        if not found:
            super().stop()
            fail("xffl-federation did not say where it listens")
        self.endpoint = "xffl://" + found.group(1)
        self.served = None

    def stop(self):
        super().stop()
        if self.served is None:
            found = re.search(r"served (.*)$", self.process.stdout.read() or "", re.M)
            self.served = found.group(1) if found else ""


def load():
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


class Federation:
    """The server and the three jobs; everything ended on exit."""

    def __init__(self, program_args, env):
        self.stop_file = facility_job.stop_file("xffl-continue-bench-")
        env = dict(env, XFFL_TEST_STOP_FILE=self.stop_file, XFFL_TIMEOUT=TIMEOUT)
        if STORE == "etcd3":
            self.server = EtcdCluster(ETCD_CLUSTER, len(SIZES))
            if self.server.skipped:
                fail("STORE=etcd3 needs etcd and etcdctl")
            secret = self.server.secret
        else:
            secret = "continue-bench-secret"
            self.server = StatsServer(SERVER, secret) if server_has_stats() else Server(SERVER, secret)
        self.jobs = [Job(XFFL_RUN, f, SIZES, HSDP, self.server.endpoint, secret, [PROGRAM, "continue"] + program_args,
                         env, max_time=600) for f in range(len(SIZES))]

    def __enter__(self):
        return self

    def stop(self, jobs):
        open(self.stop_file, "w").close()
        for job in jobs:
            if job.finish(f"facility {job.facility}'s job") != 0:
                fail(f"facility {job.facility}'s job failed:\n" + "\n".join(job.snapshot()[-30:]))

    def __exit__(self, *_):
        for job in self.jobs:
            if job.process.poll() is None:
                job.signal_ranks()
                job.kill()
        self.server.stop()


def recovery(ttl):
    """(seconds to the next completed round among the survivors, seconds to the first "lost" line)."""
    with Federation(["256", "20"], {"XFFL_FEDERATION_LEASE_TTL": str(ttl)}) as fed:
        survivors, victim = fed.jobs[:2], fed.jobs[2]
        wait_for("every facility averaging", lambda: all(max_round(j) >= 3 for j in fed.jobs) and
                 len(victim.pids()) == 2, fed.jobs, bound=120)
        victim.signal_ranks()
        killed = time.time()
        wait_for("the survivors going on", lambda: all(max_round(j, "0,1") >= 1 for j in survivors), survivors,
                 bound=60 + 3 * ttl)
        # Each survivor rank's first round without facility 2; the federation has completed it when the
        # last of them has.
        firsts = {}
        for job in survivors:
            for r in job.timed_rounds():
                if r["live"] == "0,1":
                    firsts[r["rank"]] = min(firsts.get(r["rank"], r["time"]), r["time"])
        if len(firsts) != sum(SIZES[:2]):
            wait_for("every survivor rank's round", lambda: False, survivors, bound=1)
        told = min(when for job in survivors for when, line in list(job.lines) if "facility 2 lost" in line)
        fed.stop(survivors)
        return max(firsts.values()) - killed, told - killed


def overhead(mode, count, rounds, warmup):
    """One run's medians over its rounds, in seconds: least (the least time any rank spent in the round's
    average), least_sender and least_other (the same among the crossing ranks, among the others), and
    period (from the end of the first timed round to the end of the last, over the rounds between: what a
    loop of rounds takes per round, its pause included)."""
    env = {"XFFL_FACILITY_FAULTS": mode}
    if CHECK_STRIDE > 1:
        env["XFFL_TEST_CHECK_STRIDE"] = str(CHECK_STRIDE)
    with Federation([str(count), str(PACE_MS)], env) as fed:
        wait_for(f"{rounds + warmup} rounds under {mode}",
                 lambda: all(max_round(j) >= rounds + warmup for j in fed.jobs), fed.jobs, bound=600)
        fed.stop(fed.jobs)
        least, ends = {}, {}
        for facility, job in enumerate(fed.jobs):
            offset = sum(SIZES[:facility])
            for r in job.timed_rounds():
                if warmup < r["round"] <= warmup + rounds:
                    # HSDP h: job ranks 0..h-1 are the crossing ranks (the first replica of each shard)
                    role = "least_sender" if r["rank"] - offset < int(HSDP) else "least_other"
                    for key in ("least", role):
                        per = least.setdefault(key, {})
                        per[r["round"]] = min(per.get(r["round"], r["seconds"]), r["seconds"])
                    ends[r["round"]] = max(ends.get(r["round"], r["time"]), r["time"])
        fed.server.stop()
        served = getattr(fed.server, "served", None)
        if served and mode == "continue":
            total = max(max_round(j) for j in fed.jobs)
            per = ", ".join(f"{name} {int(n) / total / len(SIZES):.2f}" for name, n in
                            (item.rsplit(" ", 1) for item in served.split(", ")))
            print(f"  store requests per round and crossing rank ({total} rounds): {per}", flush=True)
        result = {key: statistics.median(values.values()) for key, values in least.items()}
        result["period"] = (ends[warmup + rounds] - ends[warmup + 1]) / (rounds - 1)
        return result


def main():
    for binary in (XFFL_RUN, SERVER, PROGRAM):
        if not os.access(binary, os.X_OK):
            print(f"missing {binary}: build the xffl-run, xffl-federation and check_facility targets", file=sys.stderr)
            sys.exit(2)
    parts = os.environ.get("PARTS", "recovery overhead").split()
    store = "three etcd members" if STORE == "etcd3" else "built-in xffl-federation"
    print(f"{len(SIZES)} facilities of {','.join(map(str, SIZES))} ranks, HSDP {HSDP}, {store} on loopback; {load()}")
    if "recovery" in parts:
        print("\nrecovery: SIGKILL of facility 2's job between rounds (XFFL_TIMEOUT=%s)" % TIMEOUT)
        print(f"{'ttl_s':>6} {'run':>4} {'lost_s':>8} {'lost/ttl':>9} {'round_s':>8} {'round/ttl':>10}")
        for ttl in [int(t) for t in os.environ.get("TTLS", "1 2 5").split()]:
            ratios = []
            for run in range(REPEATS):
                recovered, told = recovery(ttl)
                ratios.append(recovered / ttl)
                print(f"{ttl:6.1f} {run:4d} {told:8.2f} {told / ttl:9.2f} {recovered:8.2f} {recovered / ttl:10.2f}",
                      flush=True)
            print(f"{ttl:6.1f} median round/ttl {statistics.median(ratios):.2f}  ({load()})", flush=True)
    if "overhead" in parts:
        count, rounds = int(os.environ.get("COUNT", "262144")), int(os.environ.get("ROUNDS", "40"))
        warmup = int(os.environ.get("WARMUP", "5"))
        print(f"\noverhead: no fault, {count} f32 values ({count * 4 / 2**20:.1f} MiB) per rank, {rounds} rounds "
              f"after {warmup}, pause {PACE_MS} ms, every {CHECK_STRIDE} value(s) checked; seconds = median over the "
              f"rounds of the least time in the average")
        metrics = ("least", "least_sender", "least_other", "period")
        times = {mode: {key: [] for key in metrics} for mode in MODES}
        for run in range(REPEATS):
            for mode in MODES:
                result = overhead(mode, count, rounds, warmup)
                for key in metrics:
                    times[mode][key].append(result.get(key, float("nan")))
                print(f"run {run} {mode:>8} " + ", ".join(f"{key} {result.get(key, float('nan')):.5f}"
                                                        for key in metrics) + " s", flush=True)
        if set(MODES) != {"continue", "fail"}:
            return
        for key in metrics:
            if all(math.isnan(x) for x in times["continue"][key]):
                continue  # no rank of that kind (SIZES of 1)
            cont, failing = statistics.median(times["continue"][key]), statistics.median(times["fail"][key])
            spread = max(max(v[key]) / min(v[key]) for v in times.values())
            print(f"{key:>12}: median continue {cont:.5f} s, fail {failing:.5f} s: continue / fail = "
                  f"{cont / failing:.3f} (largest max/min between runs of one mode: {spread:.3f})")
        print(f"{load()}")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    main()
