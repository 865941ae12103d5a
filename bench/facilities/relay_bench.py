#!/usr/bin/env python3
"""The cost of xffl-relay on loopback: one 64 MiB federated average between two facility jobs (one rank
each) directly against through relays (both facilities set XFFL_WAN_RELAY, so they meet at facility 1's
relay), with and without encryption, the modes alternating in SETS sets; and the CPU seconds the relay
spent per GB it forwarded (its own count, printed when it ends). A benchmark, not a test.

usage: bench/facilities/relay_bench.py [BUILD_DIR]    (default build/ci)
Environment: MODEL_MIB (64), ITERATIONS (5 timed averages per job, after one warm-up), SETS (3),
             STREAMS (XFFL_WAN_STREAMS, 4), RELAY_BIN (another xffl-relay to measure).
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build/ci"))
RUN = f"{build}/tools/xffl-run/xffl-run"
FEDERATION = f"{build}/tools/xffl-federation/xffl-federation"
RELAY = os.environ.get("RELAY_BIN", f"{build}/tools/xffl-relay/xffl-relay")
BENCH = f"{build}/bench/facilities/facilities-average-bench"
for binary in (RUN, FEDERATION, RELAY, BENCH):
    if not os.access(binary, os.X_OK):
        sys.exit(f"missing {binary}: build xffl-run xffl-federation xffl-relay facilities-average-bench")
MIB = int(os.environ.get("MODEL_MIB", "64"))
ITERATIONS = int(os.environ.get("ITERATIONS", "5"))
SETS = int(os.environ.get("SETS", "3"))
STREAMS = os.environ.get("STREAMS", "4")
SECRET = "relay-bench-secret"


def serve(command):
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True,
                               env=dict(os.environ, XFFL_AUTH_TOKEN=SECRET))
    address = re.search(r"listening on (\S+)", process.stdout.readline()).group(1)
    return process, address, log


def stop(process, log):
    process.terminate()
    process.wait(10)
    log.seek(0)
    return log.read()


def one(relayed, encryption):
    federation, endpoint, federation_log = serve([FEDERATION, "--listen", "127.0.0.1:0"])
    relays = [serve([RELAY, "--listen", "127.0.0.1:0", "--log-level", "warn"]) for _ in range(2)] if relayed else []
    jobs = []
    for facility in range(2):
        env = dict(os.environ, XFFL_AUTH_TOKEN=SECRET, XFFL_JOB_ID="relay-bench", XFFL_WAN_STREAMS=STREAMS,
                   XFFL_WAN_ENCRYPTION=encryption)
        if relayed:
            env["XFFL_WAN_RELAY"] = relays[facility][1]
        jobs.append(subprocess.Popen(
            [RUN, "-n", "1", "--federated", "1,1", "--hsdp", "1", "--facility", str(facility), "--federation",
             "xffl://" + endpoint, "--backend", "ucx", "--timeout", "120", "--", BENCH,
             str(MIB * 1024 * 1024 // 4), "hier", str(ITERATIONS)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env))
    outputs = [job.communicate(timeout=600)[0] for job in jobs]
    stop(federation, federation_log)
    cpu_per_gb = None
    if relayed:
        texts = [stop(process, log) for process, _, log in relays]
        # Facility 1's relay is where they meet (the higher rank's); facility 0's pairs nothing.
        found = re.search(r"forwarded (\d+) bytes.*; ([0-9.]+) CPU seconds", texts[1])
        if not found or int(found.group(1)) == 0:
            sys.exit("facility 1's relay forwarded nothing:\n" + "\n".join(texts))
        cpu_per_gb = float(found.group(2)) / (int(found.group(1)) / 1e9)
    for job, output in zip(jobs, outputs):
        if job.returncode != 0:
            sys.exit(f"a job failed ({job.returncode}):\n{output}")
    seconds = [float(s) for s in re.findall(r"RESULT .* seconds=([0-9.]+)", outputs[0])]
    return seconds, cpu_per_gb


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


print(f"{MIB} MiB federated average, 2 facility jobs of 1 rank, {STREAMS} streams, loopback; "
      f"{SETS} sets of {ITERATIONS} timed averages per mode; load before {load()}")
modes = [(relayed, encryption) for encryption in ("none", "aes-256-gcm") for relayed in (False, True)]
times = {mode: [] for mode in modes}
cpu = {mode: [] for mode in modes}
for _ in range(SETS):
    for mode in modes:
        seconds, per_gb = one(*mode)
        times[mode] += seconds
        if per_gb is not None:
            cpu[mode].append(per_gb)
for encryption in ("none", "aes-256-gcm"):
    direct = statistics.median(times[(False, encryption)])
    relayed = statistics.median(times[(True, encryption)])
    print(f"encryption {encryption:12s} direct {direct * 1e3:8.1f} ms  relay {relayed * 1e3:8.1f} ms  "
          f"ratio {relayed / direct:5.2f}  (min {min(times[(False, encryption)]) * 1e3:.1f} / "
          f"{min(times[(True, encryption)]) * 1e3:.1f} ms)  relay CPU {statistics.median(cpu[(True, encryption)]):.3f} s/GB")
print(f"load after {load()}")
