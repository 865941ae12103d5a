#!/usr/bin/env python3
"""XFFL_FACILITY_FAULTS=continue across shaped links (tests/netns, label netns): three facility jobs
(xffl-run --facility/--federation, 2 ranks each, HSDP 1) in three namespaces, the built-in
xffl-federation server in facility 0's, every link 1 Gbit/s and 10 ms each way (run_netns_continue.sh
builds them). The jobs, the server and the checks are tests/facilities/run_continue.py's (imported, it
reads its arguments from sys.argv); XFFL_RUN and XFFL_FEDERATION are links to in_facility.sh, which
start the real ones in their namespaces.

usage (from run_netns_continue.sh): netns_continue.py XFFL_RUN XFFL_FEDERATION PROGRAM SCENARIO
                                        [etcd3 FEDERATION_ETCD_CLUSTER]
  restart      run_continue.py's restart across the links: facility 2's job SIGKILLed between rounds,
               facilities 0 and 1 go on in a new epoch, facility 2's job started again is admitted,
               healed across the link (the model of the round it resumes after, HMAC-verified) and
               contributes again.
  kill_sender  run_continue.py's kill_sender across the links, the kill placed inside the crossing
               all-reduce: rounds paced 100 ms apart, facility 2's relay armed (SIGUSR2, its
               --hold-after-usr2 60) takes the first bulk TCP segment facility 2 sends after 60 ms
               without one (the first data of a round's all-reduce: only the crossing collectives send
               bulk data out of a facility, the store's messages are small) and from then on lets
               nothing in, so that all-reduce cannot complete (its result needs data that has yet to
               come in: the ring's later steps depend on what facility 2 just sent); the harness then
               SIGKILLs facility 2's sender and lets traffic in again. Checked afterwards: the sender's
               last round printed is L, and the survivors' round L + 1 with facility 2 failed in their
               all-reduce ("round L+1 is redone ... (here: ...)") and was computed by 0 and 1 alone.
               Then the job ends as a whole, is started again and rejoins.
  kill_relay   run_continue.py's kill_relay across the links (facility 2's relayed rank stopped, killed
               once its sender crossed a round the survivors completed and sits in the relay to it),
               then the restart and rejoin.
  sigstop      run_continue.py's sigstop across the links (XFFL_TIMEOUT 60, the others go on after the
               lease TTL), then the hung job SIGKILLed, started again, rejoins.
  (etcd3: the membership store is a three-member etcd cluster, tests/federation's
  federation_etcd_cluster, one member in each facility's namespace on its facility address (member m in
  facility (m + 2) % 3: m0, every endpoint's first, is facility 2's), peers and clients across the
  shaped links; with kill_sender, kill_relay and restart facility 2's member is SIGKILLed with its job
  and restarted, with its data, before it.)
  cut          facility 2's link cut (it reaches neither the others nor the server) while every
               facility averages: facilities 0 and 1, a majority, go on without it; facility 2, alone
               and its store silent for more than a lease TTL, ends every rank with XFFL_EQUORUM within
               XFFL_TIMEOUT of its call (2 x XFFL_TIMEOUT tells a hang apart), never prints a round the
               others did not compute (no split brain). The link restored, facility 2's job started again is
               admitted, healed and contributes.
  cut_heal     the link cut, then restored once the others went on without facility 2 (shorter than
               XFFL_TIMEOUT): facility 2's job, still in its average, finds itself evicted, waits for
               its admission, receives the model and contributes again, with no error.
  tamper_heal  as restart, but facility 2's relay flips one byte of the heal transfer toward it (TCP
               checksum fixed, so only the heal's HMAC can notice): every rank of the restarted job
               fails with XFFL_EAUTH and prints no round (the wrong model is never used); the others
               go on without it, unharmed.
  heal_time    not a test (bench/facilities/heal.sh): the heal of a model of $HEAL_MODEL_MIB MiB (f32)
               across the link, restart as above with no pause between rounds; prints the link's rate
               with one plain TCP stream from facility 0 to 2 ($HEAL_TCP_STREAM) and the heal's time from
               the library's info lines (the sender's transfer of the model and its seal, then the
               joiner's check of the seal) against bytes / rate ("HEAL ..." lines).
Each time, as in run_continue.py: every round's result is the same bytes on every rank that printed it
(across facilities) and the (weighted) mean of the inputs of that round's live facilities; the
survivors finish; every wait is bounded. Prints "netns continue test passed" and exits 0, or names the
first difference and exits 1.
"""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "facilities"))
import run_continue as harness  # noqa: E402  (reads XFFL_RUN XFFL_FEDERATION PROGRAM SCENARIO from sys.argv)
import facility_job  # noqa: E402
from federation_servers import fail  # noqa: E402

NAMESPACES = os.environ["XFFL_NETNS_FACILITIES"].split()
RELAY_PIDS = [int(pid) for pid in os.environ["XFFL_NETNS_RELAY_PIDS"].split()]
WORKDIR = os.environ["XFFL_NETNS_WORKDIR"]
QUORUM_LOST = re.compile(r"average failed: XFFL_EQUORUM\b")
VICTIM = 2


def link(facility, state):
    """Cuts ("down") or restores ("up") a facility's only link (facilities.sh's facilities_link)."""
    subprocess.run(["ip", "-n", NAMESPACES[facility], "link", "set", f"xveth{facility}", state], check=True)


class Succeeded:
    """A job as harness.check_results sees it, without its "average failed" lines (which it allows in
    its quorum scenario only): the failures are checked apart, its rounds with every other rank's."""

    def __init__(self, job):
        self.job, self.facility = job, job.facility

    def snapshot(self):
        return [line for line in self.job.snapshot() if "average failed" not in line]

    def rounds(self):
        return self.job.rounds()


def every_rank_failed(job, pattern, what):
    failed = [line for line in job.snapshot() if "average failed" in line]
    ranks = {int(harness.facility_job.LINE.search(line).group(1)) for line in failed}
    if len(ranks) != harness.SIZES[job.facility] or not all(re.search(pattern, line) for line in failed):
        fail(f"facility {job.facility}: expected {what} on each rank:\n" + "\n".join(job.snapshot()[-30:]))
    print("\n".join(f"facility {job.facility}: " + line for line in failed))


def back_and_contributing(survivors, returned):
    """Waits until facility 2 (returned: its job) contributed to two rounds after its return."""
    print("logged: " + harness.back_and_contributing(survivors, returned)[0])


KILLED_IN_CROSSING = {}  # kill_sender: the jobs, for the check after the run


def kill_sender_in_crossing(victim, survivors, pids):
    """kill_sender's fault across the links: SIGKILL of facility 2's sender while its relay holds it
    inside a round's crossing all-reduce (--hold-after-usr2; the docstring above says why it is there)."""
    sender = min(pids)
    log = os.path.join(WORKDIR, f"relay.{VICTIM}.log")

    def holding():
        with open(log) as lines:
            return [line.strip() for line in lines if "holding" in line]
    os.kill(RELAY_PIDS[VICTIM], signal.SIGUSR2)  # armed: the next round's first bulk data out
    harness.wait_for("facility 2's relay holding its crossing all-reduce", holding, survivors + [victim])
    harness.kill_ranks(victim, {sender: pids[sender]})
    harness.wait_for("facility 2's sender dead", lambda: not alive(pids[sender]), survivors)
    os.kill(RELAY_PIDS[VICTIM], signal.SIGUSR2)  # released, once nothing it lets in can reach the sender
    print("relay: " + holding()[0])
    KILLED_IN_CROSSING.update(victim=victim, survivors=survivors, sender=sender)


def alive(pid):
    """Whether process pid runs (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def check_killed_in_crossing():
    """The survivors' round after the sender's last one failed in its all-reduce with facility 2 and was
    computed without it."""
    victim, survivors, sender = (KILLED_IN_CROSSING[k] for k in ("victim", "survivors", "sender"))
    printed = max((r[1] for r in victim.rounds() if r[0] == sender), default=0)
    redone = [line for job in survivors for line in job.snapshot()
              if f"round {printed + 1} is redone in epoch" in line and "(here: " in line]
    computed = {r[3] for job in survivors for r in job.rounds() if r[1] == printed + 1}
    if not redone or computed != {"0,1"}:
        fail(f"facility 2's sender printed round {printed} last, but the survivors' round {printed + 1} did not fail "
             f"in the crossing and get redone without it (live {computed}):\n" +
             "\n".join(line for job in survivors for line in job.snapshot() if "redone" in line))
    print(f"killed inside the all-reduce of round {printed + 1}: " + redone[0])


def end_all(jobs, server):
    """Kills the jobs still running, then the server (on every way out)."""
    for job in jobs:
        if job.process.poll() is None:
            harness.kill_ranks(job, job.pids(), signal.SIGKILL)
            job.kill()
    server.stop()


def tcp_rate(stream, sender, receiver, size):
    """bit/s of one plain TCP stream from facility sender to receiver through the link."""
    receive = subprocess.Popen(["ip", "netns", "exec", NAMESPACES[receiver], stream, "recv",
                                f"198.19.{receiver}.1", "5001", "1"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    subprocess.run(["ip", "netns", "exec", NAMESPACES[sender], stream, "send", f"198.19.{receiver}.1", "5001",
                    str(size)], check=True, timeout=120)
    out, _ = receive.communicate(timeout=30)
    return int(re.search(r"rate_bps=(\d+)", out).group(1))


def heal_time():
    model = int(os.environ.get("HEAL_MODEL_MIB", "256")) << 20
    rate = tcp_rate(os.environ["HEAL_TCP_STREAM"], 0, VICTIM, 128 << 20)
    print(f"HEAL link one TCP stream 0->2: {rate / 1e6:.0f} Mbit/s; model {model} bytes: "
          f"bytes / rate {model * 8 / rate:.3f} s, bytes / 1 Gbit/s {model * 8 / 1e9:.3f} s")
    stop_file = facility_job.stop_file("xffl-netns-heal-")
    env = {"XFFL_TEST_STOP_FILE": stop_file, "XFFL_TIMEOUT": "300"}
    program_args = [str(model // 4 - 1), "0"]  # count + 1 f32 (the stop flag): the model's bytes
    server = harness.Server(harness.SERVER, harness.SECRET)
    jobs = []
    try:
        jobs = harness.start_all(server, program_args, env)
        survivors, victim = jobs[:VICTIM], jobs[VICTIM]
        harness.wait_for("every facility averaging", lambda: all(harness.max_round(j) >= 1 for j in jobs), jobs, 600)
        harness.kill_ranks(victim)
        victim.kill()
        harness.wait_for("the survivors going on", lambda: all(harness.max_round(j, "0,1") >= 1 for j in survivors),
                         survivors, 600)
        returned = harness.Job(VICTIM, server.endpoint, program_args, env)
        jobs.append(returned)
        harness.wait_for("facility 2 healed", lambda: returned.rounds(), survivors + [returned], 600)
        # The library's lines: the sender's transfer (the model, then its seal), the joiner's check of
        # the seal; the joiner acks the round only after both.
        lines = "\n".join(line for job in survivors + [returned] for line in job.snapshot())
        sent = re.search(r"sent the model of round (\d+) to facility 2 \((\d+) bytes, then its seal\) in (\S+) s",
                         lines)
        verified = re.search(r"verified the seal of the model of round \d+ \(\d+ bytes\) in (\S+) s", lines)
        if not sent or not verified:
            fail("no line of the heal's transfer or of its seal's check:\n" + lines[-3000:])
        send_s, verify_s = float(sent.group(3)), float(verified.group(1))
        heal = send_s + verify_s
        print(f"HEAL round {sent.group(1)}: sent {sent.group(2)} bytes and the seal in {send_s:.3f} s, seal verified "
              f"in {verify_s:.3f} s; heal {heal:.3f} s = {heal * rate / 8 / model:.2f} x bytes / rate, "
              f"{heal * 1e9 / 8 / model:.2f} x bytes / 1 Gbit/s")
        open(stop_file, "w").close()
        for job in survivors + [returned]:
            job.finish(f"facility {job.facility}'s job", timeout=600)
        harness.check_results(survivors + [returned])
    finally:
        end_all(jobs, server)


def run(scenario):
    timeout = 10 if scenario == "cut" else 30
    stop_file = facility_job.stop_file("xffl-netns-continue-")
    env = {"XFFL_TEST_STOP_FILE": stop_file, "XFFL_TIMEOUT": str(timeout)}
    # tamper_heal: a model of 256 KiB, so that the heal is many large segments (the relay flips one).
    program_args = ["65536" if scenario == "tamper_heal" else "256", "20"]
    server = harness.Server(harness.SERVER, harness.SECRET)
    jobs = []
    try:
        jobs = harness.start_all(server, program_args, env)
        survivors, victim = jobs[:VICTIM], jobs[VICTIM]
        harness.wait_for("every facility averaging",
                         lambda: all(harness.max_round(j) >= 3 for j in jobs) and len(victim.pids()) == 2, jobs, bound=60)
        if scenario == "tamper_heal":
            harness.kill_ranks(victim)
        else:
            link(VICTIM, "down")
        lost_at = time.time()
        harness.wait_for("the survivors going on without facility 2",
                         lambda: all(harness.max_round(j, "0,1") >= 3 for j in survivors), survivors)
        print(f"survivors averaging without facility 2 {time.time() - lost_at:.1f} s after the "
              f"{'kill' if scenario == 'tamper_heal' else 'cut'}")
        running = list(jobs)
        if scenario == "cut":
            # Alone and cut off: XFFL_EQUORUM on every rank, never a hang. Its crossing rank's part of the
            # average ends by XFFL_TIMEOUT less min(1 s, XFFL_TIMEOUT / 10) after its call, with no answer
            # from the store for more than a lease TTL by then; its other rank gets that status through the
            # relay (measured: the error 9.0 s into the average, the job ended 10.8 s after the cut, with
            # 10 s). The job's exit may add a lease TTL; 2 x XFFL_TIMEOUT only tells a hang apart.
            victim.finish("facility 2 cut off", timeout=2 * timeout)
            every_rank_failed(victim, QUORUM_LOST, "XFFL_EQUORUM")
            print(f"facility 2 ended {time.time() - lost_at:.1f} s after the cut (XFFL_TIMEOUT {timeout} s)")
            link(VICTIM, "up")
            returned = harness.Job(VICTIM, server.endpoint, program_args, env)
            jobs.append(returned)
            back_and_contributing(survivors, returned)
            running.append(returned)
        elif scenario == "cut_heal":
            link(VICTIM, "up")
            back_and_contributing(survivors, victim)
            # Evicted in the middle of a round ("no longer a member"), or found not a member at the next
            # one: either way it waits for its admission and receives the model of a round 0 and 1
            # computed without it.
            back = [line for line in victim.snapshot() if "no longer a member" in line or "admitted in epoch" in line]
            received = [r for r in victim.rounds() if r[3] == "0,1"]
            if not back or not received:
                fail("facility 2 did not return through its admission and a received model:\n" +
                     "\n".join(victim.snapshot()[-30:]))
            print("logged: " + "\n        ".join(back))
            print(f"facility 2 received the model of round {received[0][1]}")
        elif scenario == "tamper_heal":
            victim.kill()
            running.remove(victim)
            os.kill(RELAY_PIDS[VICTIM], signal.SIGUSR1)  # the next large segments toward facility 2: the heal's
            returned = harness.Job(VICTIM, server.endpoint, program_args, env)
            jobs.append(returned)
            returned.finish("facility 2's job after the corrupted heal", timeout=60)
            with open(os.path.join(WORKDIR, f"relay.{VICTIM}.log")) as log:
                flipped = [line.strip() for line in log if "flipped" in line]
            if not flipped:
                fail("facility 2's relay never flipped a byte")
            print("relay: " + flipped[0])
            every_rank_failed(returned, r"XFFL_EAUTH", "XFFL_EAUTH (the heal's HMAC)")
            if returned.rounds():
                fail(f"facility 2 printed a round after the corrupted heal: {returned.rounds()[0]}")
            # The others are unharmed: they go on, bit-identical, without facility 2.
            after = max(harness.max_round(j) for j in survivors)
            harness.wait_for("the survivors going on after the rejected heal",
                             lambda: all(harness.max_round(j, "0,1") >= after + 3 for j in survivors), survivors)
            running.append(returned)
        open(stop_file, "w").close()
        for job in running:
            if job.process.poll() is None and job.finish(f"facility {job.facility}'s job") != 0:
                fail(f"facility {job.facility}'s job failed:\n" + "\n".join(job.snapshot()[-40:]))
        for job in survivors:
            if any("average failed" in line for line in job.snapshot()):
                fail(f"facility {job.facility}: " + next(l for l in job.snapshot() if "average failed" in l))
        by_round = harness.check_results([Succeeded(job) for job in running])
        told = [line for job in survivors for line in job.snapshot() if "facility 2 lost" in line]
        if not told:
            fail("no log line names facility 2 as lost")
        print("logged: " + told[0])
        print(f"{len(by_round)} rounds, each bit-identical on every rank that computed it")
    finally:
        end_all(jobs, server)


if __name__ == "__main__":
    if harness.ETCD3:
        # Member m in facility (m + 2) % 3's namespace, on its facility address: m0 is facility 2's
        # (run_continue.py's VICTIM_MEMBER), the first member of every facility's endpoint.
        homes = [(m + 2) % 3 for m in range(3)]
        harness.ETCD_CLUSTER_ARGS = ["--hosts", ",".join(f"198.19.{f}.1" for f in homes),
                                     "--netns", ",".join(NAMESPACES[f] for f in homes)]
    if harness.SCENARIO == "kill_sender":
        # Rounds 100 ms apart: a quiet time between one round's all-reduce and the next's.
        harness.PROGRAM_ARGS["kill_sender"] = ["65536", "100", "weighted"]
        harness.kill_sender = kill_sender_in_crossing
    if harness.SCENARIO in ("restart", "kill_sender", "kill_relay", "sigstop"):
        harness.run(harness.SCENARIO)
        if harness.SCENARIO == "kill_sender":
            check_killed_in_crossing()
    elif harness.SCENARIO == "heal_time":
        heal_time()
    else:
        run(harness.SCENARIO)
    print("netns continue test passed")
