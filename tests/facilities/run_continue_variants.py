#!/usr/bin/env python3
"""run_continue.py's scenarios (XFFL_FACILITY_FAULTS=continue, three facility jobs under xffl-run
--facility/--federation and the built-in xffl-federation server) with what that harness leaves at its
defaults: a compressed WAN hop and the nonblocking average (label facilities).

usage: run_continue_variants.py XFFL_RUN XFFL_FEDERATION PROGRAM SCENARIO [hsdp2] VARIANT...
  wire=FORMAT   XFFL_WIRE_FORMAT=FORMAT (bf16, f16, int8_block, int4_block): the contributors of each
                round cross in that format; check_facility's check is then "within the format's bound of
                the mean of the round's live inputs", and the hash comparison of run_continue.py still
                demands the same bytes on every rank of every facility that printed the round.
  feedback      XFFL_ERROR_FEEDBACK=1: each crossing rank carries its residual into its next round; a
                round redone among the survivors must start from the residual the round started from.
  start         XFFL_TEST_AVERAGE_CALL=start: check_facility averages with xffl_federated_average_start
                (or _many_start), reading the getters while the request runs the round protocol on its
                own thread, then xffl_request_wait.

The scenario runs exactly as run_continue.py runs it (imported: it reads its arguments from sys.argv).
Then, on top of its checks: every round line of every job says the variant's wire format, error
feedback and call (the settings reached the library and the program), and with a compressing format
at least one round among two or more facilities was not exact (the hop did compress; its largest error
is printed, with the bound's margin). Prints "continue test passed" and exits 0, or exits 1 naming the
difference.
"""
import os
import sys

VARIANT_WORDS = [a for a in sys.argv[5:] if a.startswith("wire=") or a in ("feedback", "start")]
sys.argv = sys.argv[:5] + [a for a in sys.argv[5:] if a not in VARIANT_WORDS]

WIRE = next((a.split("=", 1)[1] for a in VARIANT_WORDS if a.startswith("wire=")), "f32")
FEEDBACK = "feedback" in VARIANT_WORDS
CALL = "start" if "start" in VARIANT_WORDS else "blocking"
# Read by the library (XFFL_WIRE_FORMAT, XFFL_ERROR_FEEDBACK) and by check_facility; every facility
# job inherits this process's environment (facility_job.Job).
os.environ["XFFL_WIRE_FORMAT"] = WIRE
os.environ["XFFL_ERROR_FEEDBACK"] = "1" if FEEDBACK else "0"
os.environ["XFFL_TEST_AVERAGE_CALL"] = CALL

import run_continue as harness  # noqa: E402  (reads XFFL_RUN XFFL_FEDERATION PROGRAM SCENARIO from sys.argv)
from facility_job import LINE  # noqa: E402
from federation_servers import fail  # noqa: E402

started = []
_job = harness.Job


def recording_job(*args, **kwargs):
    job = _job(*args, **kwargs)
    started.append(job)
    return job


harness.Job = recording_job  # run() and start_all() look Job up in the module: every job is recorded


def check_variant():
    rounds = 0
    compressed = 0
    worst = 0.0
    for job in started:
        for line in job.snapshot():
            found = LINE.search(line)
            if not found or not found.group(2).startswith("continue round "):
                continue
            words = found.group(2).split()[1:]  # round K shard S ... error E: pairs
            fields = dict(zip(words[::2], words[1::2]))
            rounds += 1
            expected = {"wire": WIRE, "feedback": "1" if FEEDBACK else "0", "call": CALL}
            for key, value in expected.items():
                if fields.get(key) != value:
                    fail(f"facility {job.facility}: a round line without {key} {value}: {line}")
            error = float(fields["error"])
            worst = max(worst, error)
            if len(fields["live"].split(",")) > 1 and error > 1e-6:
                compressed += 1
    if not rounds:
        fail("no round line")
    if WIRE != "f32" and not compressed:
        fail(f"wire {WIRE}: every round of two or more facilities was exact: the hop did not compress")
    if WIRE == "f32" and worst > 1e-5:
        fail(f"wire f32: a round {worst:.3g} off the mean")
    print(f"variant wire {WIRE} feedback {int(FEEDBACK)} call {CALL}: {rounds} round lines, {compressed} "
          f"of them compressed, largest error {worst:.3g} (each within its round's bound)")


if __name__ == "__main__":
    harness.run(harness.SCENARIO)
    check_variant()
    print("continue test passed")
