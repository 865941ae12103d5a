#!/usr/bin/env python3
"""XFFL_FACILITY_FAULTS=continue through the user's path (tests/facilities, label facilities): three
facility jobs (xffl-run --facility/--federation, 2 ranks each, HSDP 1: one sender and one relayed rank
per facility) and the built-in xffl-federation server, running `check_facility continue`.

usage: run_continue.py XFFL_RUN XFFL_FEDERATION PROGRAM SCENARIO [etcd] [hsdp2]
  (hsdp2: HSDP 2, two shards per facility, each rank the sender of one, instead of HSDP 1)
  (etcd: the membership store is one etcd member on loopback instead of xffl-federation, without
  authentication, so the job secret is empty; exit 77, skipped, when etcd is not installed)
  kill        SIGKILL of facility 2's job between rounds: facilities 0 and 1 go on in a later epoch
              without it.
  restart     kill, then facility 2's job started again: it is admitted at a round boundary, its first
              average gives it the current model (bit-identical to the others' of that round) and the
              round to resume after, and it contributes from the next round on (xffl_federated_average_many
              here; the others average one buffer).
  quorum      XFFL_FEDERATION_QUORUM=3 and facility 2 killed: every survivor rank gets XFFL_EQUORUM.
  kill_sender SIGKILL of facility 2's sender only, with larger buffers and no pause between rounds (so
              it lands in the middle of the crossing all-reduce or of the relay): the others go on.
  sigstop     SIGSTOP of facility 2's job (hung, not dead): the others go on once its lease ends,
              long before XFFL_TIMEOUT (60 s here; the harness waits 40 s at most for it).
  sigcont     sigstop, then SIGCONT once the others went on: the hung facility finds itself evicted (its
              lease ended), waits in the same average for its admission, receives the model and
              contributes again.
Each time: every round's result is the same bytes on every rank that printed it (across facilities),
and equal to the (weighted) mean of the inputs of that round's live facilities; no hang (every wait of
the harness is bounded). Prints "continue test passed" and exits 0, or names the first difference and
exits 1.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

XFFL_RUN, SERVER, PROGRAM, SCENARIO = sys.argv[1:5]
USE_ETCD = "etcd" in sys.argv[5:]
# hsdp2: HSDP 2 in jobs of 2 ranks: two shards per facility, both ranks senders (no relay): the round's
# decision must be the same for every shard.
HSDP = "2" if "hsdp2" in sys.argv[5:] else "1"
SECRET = "" if USE_ETCD else "continue-test-secret"
LINE = re.compile(r"rank (\d+): (.*)$")
ROUND = re.compile(r"continue round (\d+) shard (\d+) epoch (\d+) live (\S*) hash (\S+) check (\S+)")
SIZES = [2, 2, 2]


from federation_servers import Etcd, Server, fail  # noqa: E402


class Job:
    """One facility's xffl-run job; its output lines are collected by a thread as they come."""

    def __init__(self, facility, endpoint, program_args, extra_env):
        env = dict(os.environ, XFFL_AUTH_TOKEN=SECRET, XFFL_JOB_ID="continue-test", XFFL_FACILITY_FAULTS="continue",
                   XFFL_LOG_LEVEL="info")
        for name in ("XFFL_FACILITY", "XFFL_FEDERATION", "XFFL_FEDERATED", "XFFL_CROSS_FACILITY_BACKEND"):
            env.pop(name, None)
        env.update(extra_env)
        command = [XFFL_RUN, "-n", str(SIZES[facility]), "--backend", "ucx", "--timeout", env.get("XFFL_TIMEOUT", "30"),
                   "--max-time", "150", "--federated", ",".join(map(str, SIZES)), "--hsdp", HSDP,
                   "--facility", str(facility), "--federation", endpoint, "--", PROGRAM, "continue"] + program_args
        self.facility = facility
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
        self.lines = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def snapshot(self):
        with self.lock:
            return list(self.lines)

    def pids(self):
        out = {}
        for line in self.snapshot():
            found = LINE.search(line)
            if found and found.group(2).startswith("pid "):
                out[int(found.group(1))] = int(found.group(2).split()[1])
        return out

    def rounds(self):
        """[(rank, round, epoch, live, hash, check, shard)]"""
        out = []
        for line in self.snapshot():
            found = LINE.search(line)
            if not found:
                continue
            r = ROUND.search(found.group(2))
            if r:
                out.append((int(found.group(1)), int(r.group(1)), int(r.group(3)), r.group(4), r.group(5), r.group(6),
                            int(r.group(2))))
        return out

    def finish(self, what, timeout=60):
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            self.reader.join(5)
            fail(f"{what} did not end within {timeout} s (a hang):\n" + "\n".join(self.snapshot()[-40:]))
        self.reader.join(10)
        return self.process.returncode

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.reader.join(5)


def wait_for(what, condition, jobs, bound=40):
    """Polls condition() until true; a bound only so that a hang fails the test instead of blocking it."""
    deadline = time.time() + bound
    while time.time() < deadline:
        if condition():
            return
        for job in jobs:
            if job.process.poll() is not None and job.process.returncode != 0:
                fail(f"{what}: facility {job.facility}'s job ended with {job.process.returncode}:\n" +
                     "\n".join(job.snapshot()[-40:]))
        time.sleep(0.05)
    fail(f"{what}: not within {bound} s:\n" + "\n".join(l for j in jobs for l in j.snapshot()[-15:]))


def max_round(job, live=None):
    rounds = [r for r in job.rounds() if live is None or r[3] == live]
    return max((r[1] for r in rounds), default=0)


def kill_ranks(job, pids=None, sig=signal.SIGKILL):
    for pid in (pids or job.pids()).values():
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def check_results(jobs):
    """Every round's hash is the same on every rank that printed it for its shard (its epoch and live
    facilities the same for every shard), and every check is ok. Returns {round: {rank: ...}}."""
    by_round = {}
    for job in jobs:
        failed = [l for l in job.snapshot() if "average failed" in l]
        if failed and SCENARIO != "quorum":
            fail(f"facility {job.facility}: " + failed[0])
        for rank, rnd, epoch, live, digest, check, shard in job.rounds():
            if check != "ok":
                fail(f"rank {rank}: round {rnd} (epoch {epoch}, live {live}) is not the mean of the live inputs")
            by_round.setdefault(rnd, {})[rank] = (shard, digest, epoch, live)
    for rnd, values in sorted(by_round.items()):
        if len({(epoch, live) for _, _, epoch, live in values.values()}) != 1:
            fail(f"round {rnd}: the shards disagree on its epoch or live facilities: {values}")
        for shard in {v[0] for v in values.values()}:
            if len({v for v in values.values() if v[0] == shard}) != 1:
                fail(f"round {rnd} differs between the ranks of shard {shard}: {values}")
    return by_round


def start_all(server, program_args, extra_env):
    return [Job(f, server.endpoint, program_args, extra_env) for f in range(len(SIZES))]


def run(scenario):
    stop_file = os.path.join(tempfile.mkdtemp(prefix="xffl-continue-"), "stop")
    env = {"XFFL_TEST_STOP_FILE": stop_file, "XFFL_TIMEOUT": "30"}
    program_args = ["256", "20"]
    if scenario == "quorum":
        env["XFFL_FEDERATION_QUORUM"] = "3"
    if scenario == "restart":
        program_args = ["256", "20", "many"]  # the heal and the relay of packed buffers
    if scenario == "kill_sender":
        program_args = ["65536", "0", "weighted"]
    if scenario in ("sigstop", "sigcont"):
        env["XFFL_TIMEOUT"] = "60"
    if USE_ETCD and (shutil.which("etcd") is None or shutil.which("etcdctl") is None):
        print("etcd not installed: skipped")
        sys.exit(77)
    server = Etcd() if USE_ETCD else Server(SERVER, SECRET)
    jobs = []
    try:
        jobs = start_all(server, program_args, env)
        survivors, victim = jobs[:2], jobs[2]
        wait_for("every facility averaging", lambda: all(max_round(j) >= 3 for j in jobs) and len(victim.pids()) == 2,
                 jobs, bound=60)
        pids = victim.pids()
        if scenario == "kill_sender":
            sender = min(pids)  # job rank 0: the sender of shard 0 with HSDP 1
            kill_ranks(victim, {sender: pids[sender]})
        elif scenario in ("sigstop", "sigcont"):
            kill_ranks(victim, pids, signal.SIGSTOP)
        else:
            kill_ranks(victim, pids)
        lost_at = time.time()

        if scenario == "quorum":
            codes = [job.finish(f"facility {job.facility}'s job below the quorum", timeout=60) for job in survivors]
            for job, code in zip(survivors, codes):
                failed = [l for l in job.snapshot() if "average failed" in l]
                if code != 0 or len(failed) != SIZES[job.facility] or not all("XFFL_EQUORUM" in l for l in failed):
                    fail(f"facility {job.facility}: exit {code}, expected XFFL_EQUORUM on each rank:\n" +
                         "\n".join(job.snapshot()[-20:]))
            print(f"both survivors stopped with XFFL_EQUORUM {time.time() - lost_at:.1f} s after the loss")
            check_results(survivors)
            return

        wait_for("the survivors going on without facility 2",
                 lambda: all(max_round(j, "0,1") >= 3 for j in survivors), survivors)
        print(f"survivors averaging without facility 2 {time.time() - lost_at:.1f} s after the loss")
        if scenario == "sigstop":
            kill_ranks(victim, pids, signal.SIGKILL)
        if scenario == "sigcont":
            kill_ranks(victim, pids, signal.SIGCONT)
            wait_for("facility 2 evicted, then back and contributing",
                     lambda: all(max_round(j, "0,1,2") > max_round(j, "0,1") + 1 for j in jobs), jobs)
        else:
            victim.kill()
        if scenario == "restart":
            returned = Job(2, server.endpoint, program_args, env)
            jobs.append(returned)
            wait_for("facility 2 back and contributing",
                     lambda: all(max_round(j, "0,1,2") >= 2 for j in survivors + [returned]), survivors + [returned])
        open(stop_file, "w").close()
        running = [j for j in jobs if j is not victim or scenario == "sigcont"]
        for job in running:
            if job.finish(f"facility {job.facility}'s job") != 0:
                fail(f"facility {job.facility}'s job failed:\n" + "\n".join(job.snapshot()[-40:]))
        by_round = check_results(running)

        survivor_rounds = [r for j in survivors for r in j.rounds()]
        first_epoch = min(r[2] for r in survivor_rounds)
        without = [r for r in survivor_rounds if r[3] == "0,1"]
        if not without or min(r[2] for r in without) <= first_epoch:
            fail(f"no round without facility 2 in a later epoch than {first_epoch}")
        told = [l for j in survivors for l in j.snapshot() if "facility 2 lost" in l]
        if not told:
            fail("no log line names facility 2 as lost")
        print("logged: " + told[0])
        if scenario == "sigcont":
            # Evicted in the middle of a round, or found not a member at the next one: either way it
            # waits for its admission and receives the model.
            back = [l for l in victim.snapshot() if "no longer a member" in l or "admitted in epoch" in l]
            if not back:
                fail("facility 2 did not log its return:\n" + "\n".join(victim.snapshot()[-30:]))
            print("logged: " + "\n        ".join(back))
        if scenario == "restart":
            first = min(r[1] for r in returned.rounds())
            if not any(rank < 4 for rank in by_round[first]):
                fail(f"round {first} (facility 2's first) was not printed by the survivors")
            live = next(r[3] for r in returned.rounds() if r[1] == first)
            if live != "0,1":
                fail(f"facility 2's first round {first} had live facilities {live}, expected 0,1 (it received)")
            print(f"facility 2 resumed after round {first} with the survivors' model of that round")
            admitted = [l for j in survivors + [returned] for l in j.snapshot() if "admitted" in l]
            if not admitted:
                fail("no log line names facility 2 as admitted")
            print("logged: " + "\n        ".join(admitted))
        print(f"{len(by_round)} rounds, each bit-identical on every rank that computed it")
    finally:
        for job in jobs:
            if job.process.poll() is None:
                kill_ranks(job, job.pids(), signal.SIGKILL)
                job.kill()
        server.stop()


if __name__ == "__main__":
    run(SCENARIO)
    print("continue test passed")
