"""One facility's xffl-run job (xffl-run --facility/--federation) running check_facility, its output
lines collected by a thread as they come, each with the time it was read. Shared by run_continue.py
and bench/facilities/continue_bench.py."""
import atexit
import os
import re
import signal
import shutil
import subprocess
import tempfile
import threading
import time

from federation_servers import fail

LINE = re.compile(r"rank (\d+): (.*)$")
ROUND = re.compile(r"continue round (\d+) shard (\d+) epoch (\d+) live (\S*) hash (\S+) check (\S+)"
                   r"(?: seconds (\S+))?")


class Job:
    def __init__(self, xffl_run, facility, sizes, hsdp, endpoint, secret, program_args, extra_env, max_time=150):
        env = dict(os.environ, XFFL_AUTH_TOKEN=secret, XFFL_JOB_ID="continue-test", XFFL_FACILITY_FAULTS="continue",
                   XFFL_LOG_LEVEL="info")
        for name in ("XFFL_FACILITY", "XFFL_FEDERATION", "XFFL_FEDERATED", "XFFL_CROSS_FACILITY_BACKEND"):
            env.pop(name, None)
        env.update(extra_env)
        command = [xffl_run, "-n", str(sizes[facility]), "--backend", "ucx", "--timeout", env.get("XFFL_TIMEOUT", "30"),
                   "--max-time", str(max_time), "--federated", ",".join(map(str, sizes)), "--hsdp", hsdp,
                   "--facility", str(facility), "--federation", endpoint, "--"] + program_args
        self.facility = facility
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
        self.lines = []  # (time read, line)
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            with self.lock:
                self.lines.append((time.time(), line.rstrip("\n")))

    def snapshot(self):
        with self.lock:
            return [line for _, line in self.lines]

    def pids(self):
        """{global rank: pid}, from the "rank R: pid P" lines."""
        out = {}
        for line in self.snapshot():
            found = LINE.search(line)
            if found and found.group(2).startswith("pid "):
                out[int(found.group(1))] = int(found.group(2).split()[1])
        return out

    def rounds(self):
        """[(rank, round, epoch, live, hash, check, shard)]"""
        return [(r["rank"], r["round"], r["epoch"], r["live"], r["hash"], r["check"], r["shard"])
                for r in self.timed_rounds()]

    def timed_rounds(self):
        """Every round line as a dict: rank, round, shard, epoch, live, hash, check, seconds (in the
        average) and time (when the line was read)."""
        out = []
        with self.lock:
            lines = list(self.lines)
        for when, line in lines:
            found = LINE.search(line)
            r = ROUND.search(found.group(2)) if found else None
            if r:
                out.append({"time": when, "rank": int(found.group(1)), "round": int(r.group(1)),
                            "shard": int(r.group(2)), "epoch": int(r.group(3)), "live": r.group(4),
                            "hash": r.group(5), "check": r.group(6), "seconds": float(r.group(7) or "nan")})
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

    def signal_ranks(self, pids=None, sig=signal.SIGKILL):
        """sig to the ranks of pids ({rank: pid}; default every rank)."""
        for pid in (pids or self.pids()).values():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass


def wait_for(what, condition, jobs, bound=40):
    """Polls condition() until true; a bound only so that a hang fails instead of blocking."""
    deadline = time.time() + bound
    while time.time() < deadline:
        if condition():
            return
        for job in jobs:
            if job.process.poll() is not None and job.process.returncode != 0:
                fail(f"{what}: facility {job.facility}'s job ended with {job.process.returncode}:\n" +
                     "\n".join(job.snapshot()[-40:]))
        time.sleep(0.05)
    fail(f"{what}: not within {bound} s:\n" + "\n".join(l for j in jobs for l in j.snapshot()[-15:]) +
         "\n" + stacks(jobs))


def stop_file(prefix):
    """The path of a stop file (check_facility ends its rounds once it exists) in a directory of its own,
    which is removed when this process exits."""
    directory = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, directory, True)
    return os.path.join(directory, "stop")


def thread_states(pid):
    """(thread id, name, state letter, kernel wait) of each thread of pid, as /proc shows them; [] once gone."""
    states = []
    try:
        tids = sorted(int(name) for name in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return states
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                name, rest = stat.read().split(" (", 1)[1].rsplit(") ", 1)
            with open(f"/proc/{pid}/task/{tid}/wchan") as wchan:
                wait = wchan.read().strip()
        except OSError:
            continue
        states.append((tid, name, rest.split()[0], wait))
    return states


def stacks(jobs):
    """Every thread's stack of every rank still running (gdb, when installed; bounded): where a rank
    sat when a wait of the test ran out, so that a rare failure in a full run says what it waited on."""
    out = []
    for job in jobs:
        for rank, pid in sorted(job.pids().items()):
            threads = thread_states(pid)
            out.extend(f"[rank {rank} thread {tid}] {name} {state} wchan {wait}" for tid, name, state, wait in threads)
            if not shutil.which("gdb"):
                out.append(f"(gdb not installed: no stacks of rank {rank})")
                continue
            # gdb refuses a process whose main thread has exited (a zombie): attach through a live thread.
            live = [tid for tid, _, state, _ in threads if state != "Z"]
            target = pid if pid in live or not live else live[0]
            try:
                text = subprocess.run(["gdb", "-p", str(target), "-batch", "-nx", "-ex", "set pagination off",
                                       "-ex", "thread apply all bt"], capture_output=True, text=True,
                                      timeout=30).stdout
            except (subprocess.TimeoutExpired, OSError) as error:
                text = f"(no stack: {error})"
            out.append(f"rank {rank} (pid {pid}), facility {job.facility}: the stacks of its threads")
            out.extend(f"[rank {rank} stack] {line}" for line in text.splitlines()
                       if line.startswith(("Thread", "#", "(no stack")))
    return "\n".join(out)


def max_round(job, live=None):
    rounds = [r for r in job.rounds() if live is None or r[3] == live]
    return max((r[1] for r in rounds), default=0)
