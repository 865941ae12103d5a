#!/usr/bin/env python3
"""One job per facility, through the user's path (tests/facilities, label facilities).

usage: run_facilities.py XFFL_RUN XFFL_FEDERATION XFFL_TOPO PROGRAM SCENARIO [ARGS]
  results SIZES HSDP [etcd] [dial_out=I,J] [relay=I,J] [encrypt] [garbage]
                              a federation server (built-in, or one etcd member), one xffl-run job per
                              facility, and the single-world job of the same layout: every rank's plan
                              and groups equal xffl-topo's for its global rank, WORLD is the facility's
                              job, and every federated average's bytes (per shard) are the same on every
                              rank of every facility and equal to the single-world job's. dial_out: those
                              facilities' jobs run with XFFL_WAN_DIAL_OUT=1 (they accept no connection).
                              relay: those facilities' jobs accept no connection either, and each names its
                              own xffl-relay (XFFL_TEST_RELAY) in XFFL_WAN_RELAY. encrypt: every job runs
                              XFFL_WAN_ENCRYPTION=aes-256-gcm. garbage: while the jobs run, clients that send
                              garbage, nothing, or half a hello keep connecting to every relay; the relays
                              drop them and every pair is still made.
  relay_killed                two facility jobs through relays; the relay where they meet is SIGKILLed
                              in the middle of averaging: every crossing rank fails, bounded, naming it.
  dial_out_both               two facility jobs that both dial out only: XFFL_EINVAL on every crossing
                              rank, naming both ranks, bounded.
  bad                         bad input: clear errors, bounded, no hang.
  kill                        FAIL semantics: SIGKILL of one facility's ranks in the middle of averaging;
                              the other facility's ranks end with XFFL_EPEER or XFFL_ETIMEOUT.
Prints "facilities test passed" and exits 0, or names the first difference and exits 1; 77: skipped.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

XFFL_RUN, SERVER, TOPO, PROGRAM, SCENARIO = sys.argv[1:6]
ARGS = sys.argv[6:]
SECRET = "facilities-test-secret"
LINE = re.compile(r"rank (\d+): (.*)$")
# Fields that belong to the job (its launcher, store and device), not to the federation's plan.
JOB_FIELDS = {"backend", "master_addr", "master_port", "node_local_rank", "node_local_size", "node_rank",
              "node_world_size", "device_type", "device_count", "current_device", "init_device",
              "meta_initialization", "streams"}


from federation_servers import Etcd, Server, end_process, fail, free_port  # noqa: E402


def start(ranks, options, program_args, extra_env=None, secret=SECRET):
    env = dict(os.environ, XFFL_AUTH_TOKEN=secret, XFFL_JOB_ID="facilities-test")
    for name in ("XFFL_FACILITY", "XFFL_FEDERATION", "XFFL_FEDERATED", "XFFL_CROSS_FACILITY_BACKEND"):
        env.pop(name, None)
    env.update(extra_env or {})
    command = [XFFL_RUN, "-n", str(ranks), "--backend", "ucx", "--timeout", "30", "--max-time", "120"] + options + \
              ["--", PROGRAM] + program_args
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)


def finish(process, what, timeout=150):
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        fail(f"{what} did not end within {timeout} s (a hang):\n{output}")
    return process.returncode, output


def lines_by_rank(output):
    out = {}
    for line in output.splitlines():
        found = LINE.search(line)
        if found:
            out.setdefault(int(found.group(1)), []).append(found.group(2))
    return out


def results_of(by_rank):
    """{(name, shard): {rank: hash}}"""
    out = {}
    for rank, lines in by_rank.items():
        for line in lines:
            if line.startswith("result "):
                _, name, _, shard, digest = line.split()
                out.setdefault((name, int(shard)), {})[rank] = digest
    return out


def topo(world, sizes, hsdp):
    command = [TOPO, "--world", str(world), "--federated", sizes, "--format", "json"]
    if hsdp:
        command += ["--hsdp", str(hsdp)]
    plans = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    return {plan["rank"]: plan for plan in (plans if isinstance(plans, list) else plans.get("ranks", [plans]))}


class Relay:
    """An xffl-relay (XFFL_TEST_RELAY) on loopback, a port the kernel picks; its log kept."""

    def __init__(self):
        program = os.environ.get("XFFL_TEST_RELAY")
        if not program:
            fail("XFFL_TEST_RELAY does not name xffl-relay")
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen([program, "--listen", "127.0.0.1:0", "--hello-timeout", "2"],
                                        stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline()
        found = re.search(r"listening on (\S+)", line)
        if not found:
            self.stop()
            fail("xffl-relay did not say where it listens: " + repr(line))
        self.address = found.group(1)

    def text(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        end_process(self.process)


class Garbage(threading.Thread):
    """Keeps connecting to the relays until stopped: a scanner's HTTP request, a silent client, half a
    hello (a slow loris), each left open. Counts the connections the relays closed on them."""

    def __init__(self, addresses):
        super().__init__(daemon=True)
        self.addresses, self.stopped, self.closed_by_relay, self.sent = addresses, threading.Event(), 0, 0

    def run(self):
        held = []
        while not self.stopped.wait(0.2):
            for address in self.addresses:
                host, port = address.rsplit(":", 1)
                for payload in (b"GET / HTTP/1.1\r\nHost: relay\r\n\r\n" + bytes(40), b"", b"XFFLRLY1\0\0"):
                    try:
                        s = socket.create_connection((host, int(port)), timeout=2)
                        s.sendall(payload)
                        s.setblocking(False)
                        held.append(s)
                        self.sent += 1
                    except OSError:
                        pass
            for s in list(held):
                try:
                    if s.recv(64) == b"":
                        self.closed_by_relay += 1
                        held.remove(s)
                        s.close()
                except BlockingIOError:
                    pass
                except OSError:
                    self.closed_by_relay += 1
                    held.remove(s)
                    s.close()
        for s in held:
            s.close()


def scenario_results():
    sizes_text, hsdp = ARGS[0], int(ARGS[1])
    use_etcd = "etcd" in ARGS[2:]
    dial_out = next((set(int(i) for i in a.split("=")[1].split(",")) for a in ARGS[2:] if a.startswith("dial_out=")),
                    set())
    relayed = next((set(int(i) for i in a.split("=")[1].split(",")) for a in ARGS[2:] if a.startswith("relay=")),
                   set())
    encrypt, garbage = "encrypt" in ARGS[2:], "garbage" in ARGS[2:]
    if use_etcd and (shutil.which("etcd") is None or shutil.which("etcdctl") is None):
        print("etcd not installed: skipped")
        sys.exit(77)
    sizes = [int(s) for s in sizes_text.split(",")]
    world = sum(sizes)
    layout = ["--federated", sizes_text, "--hsdp", str(hsdp)]

    single = start(world, layout, ["results"])
    code, single_output = finish(single, "the single-world job")
    if code != 0:
        fail(f"the single-world job failed ({code}):\n{single_output}")
    reference = results_of(lines_by_rank(single_output))

    server = Etcd() if use_etcd else Server(SERVER, SECRET)
    secret = "" if use_etcd else SECRET
    relays, scanner = {}, None
    try:
        relays = {i: Relay() for i in sorted(relayed)}
        if garbage:
            scanner = Garbage([r.address for r in relays.values()])
            scanner.start()
            time.sleep(0.5)  # garbage is held by the relays before the first pair

        def env_of(i):
            env = {"XFFL_WAN_DIAL_OUT": "1"} if i in dial_out else {}
            if i in relays:
                env["XFFL_WAN_RELAY"] = relays[i].address
            if encrypt:
                env["XFFL_WAN_ENCRYPTION"] = "aes-256-gcm"
            return env
        jobs = [start(size, layout + ["--facility", str(i), "--federation", server.endpoint], ["results"],
                      extra_env=env_of(i), secret=secret)
                for i, size in enumerate(sizes)]
        outputs = [finish(job, f"facility {i}'s job") for i, job in enumerate(jobs)]
    finally:
        if scanner:
            scanner.stopped.set()
            scanner.join()
        for relay in relays.values():
            relay.stop()
        server.stop()
    if relays:
        logs = {i: relay.text() for i, relay in relays.items()}
        paired = sum(len(re.findall(r"\[info\] paired ", log)) for log in logs.values())
        if paired == 0:
            fail("no relay paired a stream:\n" + "\n".join(logs.values()))
        if any(re.search(r"secret|XFFL_AUTH_TOKEN|" + re.escape(SECRET), log) for log in logs.values()):
            fail("a relay's log mentions the job secret")
        print(f"relays paired {paired} streams")
    if scanner:
        dropped = sum(len(re.findall(r"dropped the connection from .*: (bad hello|no whole hello|closed)", log))
                      for log in logs.values())
        if scanner.sent == 0 or dropped == 0 or scanner.closed_by_relay == 0:
            fail(f"garbage: {scanner.sent} sent, {dropped} dropped in the logs, {scanner.closed_by_relay} closed")
        print(f"garbage: {scanner.sent} connections, {dropped} dropped by the relays, "
              f"{scanner.closed_by_relay} seen closed, every pair still made")
    by_rank = {}
    for i, (code, output) in enumerate(outputs):
        if code != 0:
            fail(f"facility {i}'s job failed ({code}):\n{output}")
        for rank, lines in lines_by_rank(output).items():
            if rank in by_rank:
                fail(f"global rank {rank} printed by two facilities' jobs")
            by_rank[rank] = lines
    if sorted(by_rank) != list(range(world)):
        fail(f"global ranks {sorted(by_rank)} printed, not 0..{world - 1}")

    plans = topo(world, sizes_text, hsdp)
    offsets = [sum(sizes[:i]) for i in range(len(sizes))]
    checks = 0
    for rank, lines in by_rank.items():
        facility = max(i for i in range(len(sizes)) if offsets[i] <= rank)
        described = json.loads(next(l for l in lines if l.startswith("describe "))[len("describe "):])
        plan = plans[rank]
        for key, expected in plan.items():
            if key in JOB_FIELDS:
                continue
            if described.get(key) != expected:
                fail(f"rank {rank}: field {key} is {described.get(key)!r}, xffl-topo says {expected!r}")
            checks += 1
        groups = {l.split()[1]: [int(r) for r in l.split()[2].split(",")] for l in lines if l.startswith("group ")}
        expected_groups = {"world": list(range(offsets[facility], offsets[facility] + sizes[facility])),
                           "federated": plan["federated_group"], "replica": plan["replica_group"],
                           "federation": plan["federation"]}
        if plan.get("hsdp_mesh"):
            row = next(r for r in plan["hsdp_mesh"] if rank in r)
            expected_groups["hsdp_shard"] = row
            expected_groups["hsdp_replica"] = [r[row.index(rank)] for r in plan["hsdp_mesh"]]
        for name, members in expected_groups.items():
            if members is None:
                continue
            if groups.get(name) != members:
                fail(f"rank {rank}: group {name} is {groups.get(name)}, expected {members}")
            checks += 1
        for refusal, status in (("spanning group", "XFFL_EUNSUPPORTED"), ("other sizes", "XFFL_EINVAL"),
                                ("world fsdp", "XFFL_EUNSUPPORTED")):
            said = next((l for l in lines if l.startswith(refusal + " ")), "")
            if status not in said:
                fail(f"rank {rank}: {refusal}: expected {status}, got {said!r}")
            checks += 1

    got = results_of(by_rank)
    if set(got) != set(reference):
        fail(f"results {sorted(got)} differ from the single-world job's {sorted(reference)}")
    for key, digests in sorted(got.items()):
        expected = set(reference[key].values())
        if len(expected) != 1:
            fail(f"the single-world job's {key} differs between its ranks: {reference[key]}")
        for rank, digest in digests.items():
            if digest not in expected:
                fail(f"rank {rank}: {key[0]} of shard {key[1]} is {digest}; the single-world job's is {expected}")
            checks += 1
    print(f"{checks} checks; {len(got)} results equal to the single-world job's on all {world} ranks")


def expect_error(what, process, patterns, bound=60):
    began = time.time()
    code, output = finish(process, what, timeout=bound)
    if code == 0:
        fail(f"{what}: exited 0; expected an error:\n{output}")
    for pattern in patterns:
        if not re.search(pattern, output):
            fail(f"{what}: no /{pattern}/ in the output (exit {code}):\n{output}")
    print(f"{what}: exit {code} after {time.time() - began:.1f} s, as expected")


def scenario_bad():
    fed = "xffl://127.0.0.1:1"
    # xffl-run's own checks: exit 2 with a message, nothing started.
    for options, pattern in ((["--facility", "2", "--federation", fed, "--federated", "2,2"], r"--facility 2 outside"),
                             (["--facility", "0", "--federation", fed, "--federated", "3,2"], r"-n 2 is not facility 0"),
                             (["--facility", "0", "--federated", "2,2"], r"needs --federation"),
                             (["--federation", fed, "--federated", "2,2"], r"needs --facility")):
        run = subprocess.run([XFFL_RUN, "-n", "2"] + options + ["--", PROGRAM], capture_output=True, text=True,
                             timeout=30)
        if run.returncode != 2 or not re.search(pattern, run.stderr):
            fail(f"xffl-run {options}: exit {run.returncode}, stderr {run.stderr!r}; expected 2 and /{pattern}/")
    # The library's checks, with the variables set directly (as srun or mpirun would pass them).
    server = Server(SERVER, SECRET)
    try:
        cases = [
            ("facility index out of range", 2, {"XFFL_FACILITY": "2", "XFFL_FEDERATION": server.endpoint,
                                                "XFFL_FEDERATED": "2,2"},
             [r"XFFL_EINVAL", r"XFFL_FACILITY=2 outside \[0, 2\)"]),
            ("WORLD_SIZE other than F_i", 3, {"XFFL_FACILITY": "1", "XFFL_FEDERATION": server.endpoint,
                                              "XFFL_FEDERATED": "2,2"},
             [r"XFFL_EINVAL", r"world size 3 .*is not facility 1's size 2"]),
            ("only XFFL_FACILITY", 2, {"XFFL_FACILITY": "0", "XFFL_FEDERATED": "2,2"},
             [r"XFFL_EINVAL", r"XFFL_FEDERATION is not"]),
            ("only XFFL_FEDERATION", 2, {"XFFL_FEDERATION": server.endpoint, "XFFL_FEDERATED": "2,2"},
             [r"XFFL_EINVAL", r"XFFL_FACILITY is not"]),
            ("XFFL_CROSS_FACILITY_BACKEND=ucx", 2, {"XFFL_FACILITY": "0", "XFFL_FEDERATION": server.endpoint,
                                                    "XFFL_FEDERATED": "2,2", "XFFL_CROSS_FACILITY_BACKEND": "ucx"},
             [r"XFFL_EINVAL", r"cross-facility backend ucx .*cannot cross facility jobs"]),
            # One rank: with more, whichever of rank 0 (the federation is unreachable) and the others (rank
            # 0's store went with it) fails first ends the job, and only rank 0's message names the cause.
            ("unreachable federation", 1, {"XFFL_FACILITY": "0", "XFFL_FEDERATION": f"xffl://127.0.0.1:{free_port()}",
                                           "XFFL_FEDERATED": "1,1", "XFFL_TIMEOUT": "3"},
             [r"\[0\] state failed: XFFL_E(NETWORK|TIMEOUT).*federation's store xffl://"]),
        ]
        for what, ranks, env, patterns in cases:
            timeout = ["--timeout", env["XFFL_TIMEOUT"]] if "XFFL_TIMEOUT" in env else []
            expect_error(what, start(ranks, timeout, ["results"], extra_env=env), patterns)
        # A facility whose partners never come: its senders' first average ends in a bounded
        # XFFL_ETIMEOUT naming what they awaited. It registered the federation's sizes (2,2) ...
        alone = {"XFFL_FACILITY": "0", "XFFL_FEDERATION": server.endpoint, "XFFL_FEDERATED": "2,2",
                 "XFFL_TIMEOUT": "2"}
        expect_error("a facility alone", start(2, ["--timeout", "2"], ["loop", "1"], extra_env=alone),
                     [r"average failed: XFFL_ETIMEOUT", r"wan/addr/[23]' in the federation's store"])
        # ... so a facility of the same XFFL_JOB_ID with other sizes is refused at once, naming both (one
        # rank, as for the unreachable federation above).
        other = dict(alone, XFFL_FEDERATED="1,1")
        expect_error("sizes other than the federation's", start(1, ["--timeout", "2"], ["results"], extra_env=other),
                     [r"XFFL_EINVAL", r"XFFL_FEDERATED='1,1' here, but the federation .* has facilities of 2,2"])
    finally:
        server.stop()
    print("bad input checks passed")


def scenario_kill():
    server = Server(SERVER, SECRET)
    try:
        layout = ["--federated", "2,2", "--hsdp", "1", "--timeout", "5"]
        jobs = [start(2, layout + ["--facility", str(i), "--federation", server.endpoint], ["loop", "0"],
                      extra_env={"XFFL_TIMEOUT": "5"})
                for i in range(2)]
        # Wait for facility 1 to be averaging, then SIGKILL its ranks (not its launcher: a facility
        # whose ranks die at once, as a node failure takes them).
        pids, rounds, deadline = {}, 0, time.time() + 90
        victim = jobs[1]
        while rounds < 3 and time.time() < deadline:
            line = victim.stdout.readline()
            if not line:
                break
            found = LINE.search(line)
            if found and found.group(2).startswith("pid "):
                pids[int(found.group(1))] = int(found.group(2).split()[1])
            if found and found.group(2).startswith("round "):
                rounds += 1
        if rounds < 3 or len(pids) != 2:
            fail(f"facility 1 never averaged (pids {pids}, {rounds} round lines)")
        killed_at = time.time()
        for pid in pids.values():
            os.kill(pid, signal.SIGKILL)
        code, output = finish(jobs[0], "facility 0's job after facility 1 was killed", timeout=60)
        ended = time.time() - killed_at
        victim.kill()
        victim.communicate()
    finally:
        server.stop()
    failed = [l for l in output.splitlines() if "average failed" in l]
    if code == 0 or not failed:
        fail(f"facility 0's job ended with {code} and no failed average:\n{output}")
    if not any(re.search(r"XFFL_E(PEER|TIMEOUT)", l) for l in failed):
        fail(f"facility 0's failures are not XFFL_EPEER or XFFL_ETIMEOUT:\n" + "\n".join(failed))
    print(f"facility 0 ended {ended:.1f} s after the kill: " + failed[0].strip())


def scenario_relay_killed():
    server = Server(SERVER, SECRET)
    relays = []
    try:
        relays = [Relay(), Relay()]
        layout = ["--federated", "2,2", "--hsdp", "1", "--timeout", "5"]
        jobs = [start(2, layout + ["--facility", str(i), "--federation", server.endpoint], ["loop", "0"],
                      extra_env={"XFFL_TIMEOUT": "5", "XFFL_WAN_RELAY": relays[i].address,
                                 "XFFL_WAN_ENCRYPTION": "chacha20-poly1305"})
                for i in range(2)]
        # Each federated group's higher rank is facility 1's: its relay is where they meet. Kill it once
        # facility 1 has averaged (over it) a few rounds.
        rounds, deadline = 0, time.time() + 90
        while rounds < 2 and time.time() < deadline:
            line = jobs[1].stdout.readline()
            if not line:
                break
            found = LINE.search(line)
            if found and found.group(2).startswith("round "):
                rounds += 1
        if rounds < 2:
            fail(f"facility 1 never averaged through the relays ({rounds} round lines):\n" + relays[1].text())
        killed_at = time.time()
        relays[1].process.kill()
        outputs = [finish(job, f"facility {i}'s job after its relay was killed", timeout=60)
                   for i, job in enumerate(jobs)]
        ended = time.time() - killed_at
    finally:
        for relay in relays:
            relay.stop()
        server.stop()
    where = re.escape("through the relay at " + relays[1].address)
    for i, (code, output) in enumerate(outputs):
        failed = [l for l in output.splitlines() if "average failed" in l]
        if code == 0 or not failed:
            fail(f"facility {i}'s job ended with {code} and no failed average:\n{output}")
        for line in failed:
            if not re.search(r"XFFL_E(PEER|NETWORK|TIMEOUT)", line) or not re.search(where, line):
                fail(f"facility {i}: a failure that is not EPEER/ENETWORK/ETIMEOUT naming the relay:\n{line}")
        print(f"facility {i}: {failed[0].strip()}")
    print(f"both facilities ended {ended:.1f} s after the relay was killed")


def scenario_dial_out_both():
    server = Server(SERVER, SECRET)
    try:
        layout = ["--federated", "2,2", "--hsdp", "1"]
        jobs = [start(2, layout + ["--facility", str(i), "--federation", server.endpoint], ["results"],
                      extra_env={"XFFL_WAN_DIAL_OUT": "1"}) for i in range(2)]
        for i, job in enumerate(jobs):
            expect_error(f"facility {i}'s job", job,
                         [r"XFFL_EINVAL", r"ranks [0-9] and [0-9] both dial out only \(XFFL_WAN_DIAL_OUT=1\)"])
    finally:
        server.stop()


if __name__ == "__main__":
    {"results": scenario_results, "bad": scenario_bad, "kill": scenario_kill,
     "dial_out_both": scenario_dial_out_both, "relay_killed": scenario_relay_killed}[SCENARIO]()
    print("facilities test passed")
