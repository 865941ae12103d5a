#!/usr/bin/env python3
"""XFFL_FACILITY_FAULTS=continue when the federation's store goes away, through the user's path: two
facility jobs (xffl-run --facility/--federation, 2 ranks each, HSDP 1: a sender and a relayed rank per
facility) and the built-in xffl-federation server on loopback, running `check_facility continue`. Once
both facilities average, the server is stopped (SIGSTOP: it holds every connection and answers nothing,
as a store behind a cut link does) or killed (SIGKILL: every connection refused).

No facility can reach the store, so none can count a quorum: every rank of both facilities must end its
average with XFFL_EQUORUM (epochs.h, "Deadlines"), whose message names the rank, the facility, what was
awaited and for how long, and no rank may print a round that another facility did not compute (no split
brain). Each rank must end within the average's bound (XFFL_TIMEOUT); the harness only guards against
a hang (2 x XFFL_TIMEOUT after the fault, no timing threshold) and prints the times it measured.

usage: store_lost.py XFFL_RUN XFFL_FEDERATION CHECK_FACILITY sigstop|kill
Prints "store lost test passed" and exits 0, or names the first difference and exits 1.
"""
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "facilities"))
import facility_job  # noqa: E402
from facility_job import max_round, wait_for  # noqa: E402
from federation_servers import Server, fail  # noqa: E402

XFFL_RUN, SERVER, PROGRAM, SCENARIO = sys.argv[1:5]
SECRET = "store-lost-secret"
SIZES = [2, 2]
TIMEOUT = 5  # XFFL_TIMEOUT, seconds; the default lease TTL is then 2 s
FAILED = re.compile(r"rank (\d+): average failed: (XFFL_\w+): (.*)$")


def main():
    if SCENARIO not in ("sigstop", "kill"):
        fail(f"unknown scenario {SCENARIO}")
    stop_file = facility_job.stop_file("xffl-store-lost-")
    env = {"XFFL_TEST_STOP_FILE": stop_file, "XFFL_TIMEOUT": str(TIMEOUT)}
    server = Server(SERVER, SECRET)
    jobs = []
    try:
        jobs = [facility_job.Job(XFFL_RUN, f, SIZES, "1", server.endpoint, SECRET, [PROGRAM, "continue", "256", "20"],
                                 env, max_time=60) for f in range(len(SIZES))]
        wait_for("both facilities averaging", lambda: all(max_round(j) >= 3 for j in jobs), jobs, bound=60)
        os.kill(server.process.pid, signal.SIGSTOP if SCENARIO == "sigstop" else signal.SIGKILL)
        lost_at = time.time()
        before = max(max_round(j) for j in jobs)
        for job in jobs:
            job.finish(f"facility {job.facility}'s job without its store", timeout=2 * TIMEOUT)
        ended = time.time() - lost_at
        by_round = {}
        for job in jobs:
            failures = {}
            for when, line in list(job.lines):
                found = FAILED.search(line)
                if found:
                    failures[int(found.group(1))] = (when - lost_at, found.group(2), found.group(3))
            ranks = {sum(SIZES[:job.facility]) + r for r in range(SIZES[job.facility])}
            if set(failures) != ranks:
                fail(f"facility {job.facility}: ranks {sorted(ranks - set(failures))} printed no failure:\n" +
                     "\n".join(job.snapshot()[-30:]))
            for rank, (seconds, status, message) in sorted(failures.items()):
                print(f"facility {job.facility} rank {rank}: {status} {seconds:.2f} s after the store was "
                      f"{'stopped' if SCENARIO == 'sigstop' else 'killed'}: {message[:300]}")
                if status != "XFFL_EQUORUM":
                    fail(f"rank {rank} got {status}, not XFFL_EQUORUM: {message}")
            sender = failures[sum(SIZES[:job.facility])][2]
            for phrase in (f"facility {job.facility}", "has not answered this rank for", "awaited",
                           "below any quorum"):
                if phrase not in sender:
                    fail(f"facility {job.facility}'s sender's message lacks '{phrase}': {sender}")
            for rank, rnd, epoch, live, digest, check, shard in job.rounds():
                if check != "ok":
                    fail(f"rank {rank}: round {rnd} is not the mean of the live inputs")
                by_round.setdefault(rnd, set()).add((epoch, live, digest))
        # No split brain: every round printed anywhere was computed by both facilities, the same bytes.
        for rnd, values in sorted(by_round.items()):
            if len(values) != 1 or next(iter(values))[1] != "0,1":
                fail(f"round {rnd}: {sorted(values)} (not one result of both facilities)")
        print(f"last round before the fault {before}, last round printed {max(by_round)}; every rank ended "
              f"within {ended:.2f} s (XFFL_TIMEOUT {TIMEOUT} s)")
    finally:
        for job in jobs:
            job.kill()
        if SCENARIO == "sigstop" and server.process.poll() is None:
            os.kill(server.process.pid, signal.SIGCONT)
        server.stop()
    print("store lost test passed")


if __name__ == "__main__":
    main()
