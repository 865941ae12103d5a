#!/usr/bin/env python3
"""XFFL_FACILITY_FAULTS=continue through the user's path (tests/facilities, label facilities): three
facility jobs (xffl-run --facility/--federation, 2 ranks each, HSDP 1: one sender and one relayed rank
per facility) and the built-in xffl-federation server, running `check_facility continue`.

usage: run_continue.py XFFL_RUN XFFL_FEDERATION PROGRAM SCENARIO [etcd | etcd3 FEDERATION_ETCD_CLUSTER] [hsdp2]
  (hsdp2: HSDP 2, two shards per facility, each rank the sender of one, instead of HSDP 1)
  (etcd: the membership store is one etcd member on loopback instead of xffl-federation, without
  authentication, so the job secret is empty; exit 77, skipped, when etcd is not installed)
  (etcd3: a cluster of three etcd members on loopback, one per facility, with the job secret as the
  password of etcd's user "xffl" (tests/federation's cluster, through its tool federation_etcd_cluster);
  every facility's endpoint is etcd://m0,m1,m2, tried in turn. Facility f's member is m((f + 1) % 3), so
  facility 2 owns m0, the member every client tries first: where the scenario SIGKILLs facility 2's
  job (kill, restart, kill_sender, kill_relay) it SIGKILLs m0 with it, and the survivors' store clients
  must fail over to the two members left (a quorum, maybe after an election); m0 is started again
  with its data before the job. tests/netns runs the same with each member in its facility's
  namespace (ETCD_CLUSTER_ARGS). Exit 77 when etcd is not installed)
  kill        SIGKILL of facility 2's job between rounds: facilities 0 and 1 go on in a later epoch
              without it; then the job is started again and rejoins (as in restart).
  restart     kill, then facility 2's job started again: it is admitted at a round boundary, its first
              average gives it the current model (bit-identical to the others' of that round) and the
              round to resume after, and it contributes from the next round on (xffl_federated_average_many
              here; the others average one buffer).
  quorum      XFFL_FEDERATION_QUORUM=3 and facility 2 killed: every survivor rank gets XFFL_EQUORUM.
  kill_sender SIGKILL of facility 2's sender only, with larger buffers and no pause between rounds (so
              it lands in the middle of the crossing all-reduce or of the relay): the others go on, the
              job ends as a whole; then it is started again and rejoins.
  kill_relay  SIGKILL of facility 2's job rank 1, the rank that receives the relay of the cross-facility
              result from the sender (job rank 0, HSDP 1), while the relay is in flight: with 256 Ki
              values (a rendezvous transfer, which completes only when the receiver takes it) and no
              pause, the receiver is first stopped (SIGSTOP). Nothing but the average ties the sender to
              it (check_facility with one shard), so the sender goes on to its next relay and waits there;
              once the survivors have completed a round with facility 2 that facility 2's sender has not
              printed, the sender crossed that round and sits in its relay to the stopped receiver,
              which is then killed. Facility 2's job ends as a whole (all or nothing inside a facility)
              and the others go on; then it is started again and rejoins.
  sigstop     SIGSTOP of facility 2's job (hung, not dead): the others go on once its lease ends,
              long before XFFL_TIMEOUT (60 s here; the harness waits 40 s at most for it); then the hung
              job is SIGKILLed (its scheduler's end) and started again, and rejoins.
  sigcont     sigstop, then SIGCONT once the others went on: the hung facility finds itself evicted (its
              lease ended), waits in the same average for its admission, receives the model and
              contributes again.
The restarted job (kill, restart, kill_sender, kill_relay, sigstop) must be admitted, receive the model of
a round the others computed without it, and contribute to two rounds; with etcd3 its member is restarted
(with its data) before it.
Each time: every round's result is the same bytes on every rank that printed it (across facilities),
and equal to the (weighted) mean of the inputs of that round's live facilities; every rank still running
at the end (the returned facility's too) ends on the same round with the same bytes; no hang (every wait
of the harness is bounded; detection, the loss to the survivors' next rounds, is printed). Prints
"continue test passed" and exits 0, or names the first difference and exits 1.
"""
import os
import shutil
import signal
import sys
import time

XFFL_RUN, SERVER, PROGRAM, SCENARIO = sys.argv[1:5]
USE_ETCD = "etcd" in sys.argv[5:]
ETCD3 = sys.argv[sys.argv.index("etcd3") + 1] if "etcd3" in sys.argv[5:] else None
VICTIM_MEMBER = 0  # with etcd3: facility 2's etcd member, the first of the endpoint
# hsdp2: HSDP 2 in jobs of 2 ranks: two shards per facility, both ranks senders (no relay): the round's
# decision must be the same for every shard.
HSDP = "2" if "hsdp2" in sys.argv[5:] else "1"
SECRET = "" if USE_ETCD else "continue-test-secret"
SIZES = [2, 2, 2]


import facility_job  # noqa: E402
from facility_job import max_round, wait_for  # noqa: E402
from federation_servers import Etcd, EtcdCluster, Server, fail  # noqa: E402


def Job(facility, endpoint, program_args, extra_env):
    return facility_job.Job(XFFL_RUN, facility, SIZES, HSDP, endpoint, SECRET, [PROGRAM, "continue"] + program_args,
                            extra_env)


def kill_ranks(job, pids=None, sig=signal.SIGKILL):
    job.signal_ranks(pids, sig)


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


# The scenarios whose victim, facility 2's job, is started again after the fault (a new job, as its
# scheduler would): it is admitted, healed and contributes again. sigcont's hung job comes back itself;
# quorum ends the federation.
RESTARTED = ("kill", "restart", "kill_sender", "kill_relay", "sigstop")
# Each scenario's check_facility arguments (COUNT PACE_MS [weighted|many]); a harness that imports this
# one may change them (tests/netns/netns_continue.py paces kill_sender's rounds).
PROGRAM_ARGS = {
    "restart": ["256", "20", "many"],  # the heal and the relay of packed buffers
    "kill_sender": ["65536", "0", "weighted"],  # no pause: the kill lands inside an average
    "kill_relay": [str(1 << 18), "0"],  # 1 MiB: a rendezvous relay, which waits for its receiver
}
# Extra arguments of federation_etcd_cluster (tests/netns: --hosts and --netns, a member per namespace).
ETCD_CLUSTER_ARGS = []


def kill_sender_now(victim, survivors, pids):
    """kill_sender's fault: SIGKILL of facility 2's sender at once (with no pause between rounds, inside
    an average). tests/netns/netns_continue.py replaces it with a kill inside the crossing all-reduce."""
    sender = min(pids)  # job rank 0: the sender of shard 0 with HSDP 1
    kill_ranks(victim, {sender: pids[sender]})


def kill_relay_receiver(victim, survivors, pids):
    """kill_relay's fault: facility 2's relayed rank stopped, then SIGKILLed once its sender sits in the
    relay to it (a round of facility 2's that the survivors completed and its sender has not printed)."""
    receiver, sender = max(pids), min(pids)  # job ranks 1 and 0
    kill_ranks(victim, {receiver: pids[receiver]}, signal.SIGSTOP)

    def sender_relaying():
        printed = max((r[1] for r in victim.rounds() if r[0] == sender), default=0)
        return any(max_round(j, "0,1,2") > printed for j in survivors)
    wait_for("a round of facility 2's that its sender crossed and has not printed", sender_relaying, survivors)
    kill_ranks(victim, {receiver: pids[receiver]})
    printed = max((r[1] for r in victim.rounds() if r[0] == sender), default=0)
    crossed = max(max_round(j, "0,1,2") for j in survivors)
    print(f"facility 2's relayed rank killed while its sender relays round {crossed} to it (the survivors computed "
          f"that round with facility 2; its sender printed round {printed} last)")


def back_and_contributing(survivors, returned):
    """Waits until facility 2 (returned: its job) contributed to two rounds after its return; returns
    the log lines that name its admission."""
    first_back = max_round(survivors[0])
    wait_for("facility 2 back and contributing",
             lambda: len({r[1] for r in returned.rounds() if r[3] == "0,1,2" and r[1] > first_back}) >= 2,
             survivors + [returned])
    admitted = [line for job in survivors + [returned] for line in job.snapshot() if "admitted in epoch" in line]
    if not admitted:
        fail("no log line names facility 2 as admitted")
    return admitted


def check_rejoined(returned, by_round):
    """The restarted job's first round is one the survivors computed without it (it received their
    model of that round), and it contributed afterwards."""
    first = min(r[1] for r in returned.rounds())
    if not any(rank < 4 for rank in by_round[first]):
        fail(f"round {first} (facility 2's first) was not printed by the survivors")
    live = next(r[3] for r in returned.rounds() if r[1] == first)
    if live != "0,1":
        fail(f"facility 2's first round {first} had live facilities {live}, expected 0,1 (it received)")
    if not any(r[3] == "0,1,2" for r in returned.rounds()):
        fail("facility 2 never contributed after its return")
    print(f"facility 2 resumed after round {first} with the survivors' model of that round")


def check_same_end(jobs):
    """Every rank of every job ended on the same round, each shard with the same bytes: the federation
    stopped together, everything identical."""
    last = {}
    for job in jobs:
        for rank, rnd, _, live, digest, _, shard in job.rounds():
            if rank not in last or rnd > last[rank][0]:
                last[rank] = (rnd, shard, digest, live)
    rounds, shards = {v[0] for v in last.values()}, {v[1] for v in last.values()}
    if len(rounds) != 1 or any(len({v[2] for v in last.values() if v[1] == s}) != 1 for s in shards):
        fail(f"the ranks did not end on the same round with the same model: {last}")
    rnd, _, _, live = next(iter(last.values()))
    print(f"every rank ({len(last)}) ended on round {rnd} (live {live}), each shard bit-identical")


def run(scenario):
    stop_file = facility_job.stop_file("xffl-continue-")
    env = {"XFFL_TEST_STOP_FILE": stop_file, "XFFL_TIMEOUT": "30"}
    program_args = PROGRAM_ARGS.get(scenario, ["256", "20"])
    if scenario == "quorum":
        env["XFFL_FEDERATION_QUORUM"] = "3"
    if scenario == "kill_relay" and HSDP != "1":
        fail("kill_relay needs HSDP 1 (a relayed rank)")
    if scenario in ("sigstop", "sigcont"):
        env["XFFL_TIMEOUT"] = "60"
    if ETCD3:
        # Longer than an election of the cluster (timeout 2 s) and than etcd's smallest lease (1.5
        # election timeouts, 3 s); on a loaded machine a 2 s TTL also bounds the renewals' failover,
        # each with etcd's authentication (bcrypt) on the next member.
        env["XFFL_FEDERATION_LEASE_TTL"] = "5"
    if USE_ETCD and (shutil.which("etcd") is None or shutil.which("etcdctl") is None):
        print("etcd not installed: skipped")
        sys.exit(77)
    global SECRET
    if ETCD3:
        server = EtcdCluster(ETCD3, 3, ETCD_CLUSTER_ARGS)
        if server.skipped:
            print("etcd not installed: skipped")
            sys.exit(77)
        SECRET = server.secret
        print(f"the store: three etcd members, {server.endpoint}")
    else:
        server = Etcd() if USE_ETCD else Server(SERVER, SECRET)
    jobs = []
    member_killed = False
    try:
        jobs = start_all(server, program_args, env)
        survivors, victim = jobs[:2], jobs[2]
        wait_for("every facility averaging", lambda: all(max_round(j) >= 3 for j in jobs) and len(victim.pids()) == 2,
                 jobs, bound=60)
        pids = victim.pids()
        if scenario == "kill_sender":
            kill_sender(victim, survivors, pids)
        elif scenario == "kill_relay":
            kill_relay_receiver(victim, survivors, pids)
        elif scenario in ("sigstop", "sigcont"):
            kill_ranks(victim, pids, signal.SIGSTOP)
        else:
            kill_ranks(victim, pids)
        lost_at = time.time()
        if ETCD3 and scenario in ("kill", "restart", "kill_sender", "kill_relay"):
            server.kill(VICTIM_MEMBER)
            member_killed = True
            print(f"facility 2's etcd member m{VICTIM_MEMBER} killed with its job")

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
        if scenario in ("kill_sender", "kill_relay"):
            # All or nothing inside a facility: the other rank does not go on alone.
            wait_for("facility 2's job ending as a whole", lambda: victim.process.poll() is not None, [])
            print("facility 2's job ended; its last lines:\n    " + "\n    ".join(victim.snapshot()[-3:]))
        if scenario == "sigstop":
            kill_ranks(victim, pids, signal.SIGKILL)  # the hung job ended by its scheduler
        returned = None
        if scenario == "sigcont":
            kill_ranks(victim, pids, signal.SIGCONT)
            wait_for("facility 2 evicted, then back and contributing",
                     lambda: all(max_round(j, "0,1,2") > max_round(j, "0,1") + 1 for j in jobs), jobs)
        else:
            victim.kill()
        if scenario in RESTARTED:
            if member_killed:
                server.restart(VICTIM_MEMBER)
                print(f"facility 2's etcd member m{VICTIM_MEMBER} restarted with its data")
            returned = Job(2, server.endpoint, program_args, env)
            jobs.append(returned)
            admitted = back_and_contributing(survivors, returned)
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
        if returned is not None:
            check_rejoined(returned, by_round)
            print("logged: " + "\n        ".join(admitted))
        check_same_end(running)
        print(f"{len(by_round)} rounds, each bit-identical on every rank that computed it")
    finally:
        for job in jobs:
            if job.process.poll() is None:
                kill_ranks(job, job.pids(), signal.SIGKILL)
                job.kill()
        server.stop()


# The faults of kill_sender and kill_relay; a harness that imports this one may replace them.
kill_sender = kill_sender_now


if __name__ == "__main__":
    run(SCENARIO)
    print("continue test passed")
