#!/usr/bin/env python3
"""How far one run of compare.py moved from another: issue 13's "a second run on another day gives the
same ratios within 10%", cell by cell.

A run's ratios are a small JSON document (compare.py --save writes one; bench/peers/reference/ holds
runs transcribed from bench/peers/README.md):

  {"label": "...", "busbw_xffl_over_mpi": {"2": {"4 KiB": 1.64, ...}, "4": {...}},
   "cpu_mpi_over_xffl": {"2": {"4 KiB": 1.42, ...}, ...},        (optional)
   "memcpy_share": 0.54,                                           (xffl 64 MiB on 2 ranks / memcpy probe)
   "busbw_xffl": {...}, "busbw_mpi": {...},                        (optional: each side's GB/s)
   "memcpy_best_gbps": 14.85, "fault_us_per_page": 17.7,           (optional: the machine's probes)
   "memcpy_two_cores_mean_gbps": 11.2,                             (optional: per core, both copying at once)
   "exchange_gbps": 4.9, "exchange_gbps_range": [4.3, 19.8],        (optional: the cross-core probe,
                                                                    median and range over the run's)
   "machine": "AMD EPYC (family 26, model 2), 2 CPUs, Linux ..., booted ..."}  (optional)

Judged: every busbw ratio xffl / Open MPI and the memcpy share, each within the tolerance of the
reference's (|this / reference - 1| <= 10%). The CPU ratios are shown, not judged: the README's tables
give CPU per call to the microsecond, too coarse at 2-3 us for a 10% comparison. Where both runs carry
each side's busbw, the table also says which side moved (xffl's change, Open MPI's), and the machine's
probes are printed side by side: a ratio can move because the machine did (a page fault's cost moves
Open MPI's 64 MiB tenfold; the cross-core probe, where the host placed the two CPUs, moves xffl's 2-rank
busbw from 1 to 64 MiB up to fourfold), which the verdict alone does not tell apart from a change in
xffl. Compare runs whose exchange probes agree (README, "Two states of the machine"): the report says
whether both runs stayed in one and the same state, and whether they ran on the same machine (booted
once).

usage: drift.py REFERENCE.json THIS.json [--tolerance 0.10]
(compare.py --against REFERENCE.json prints the same after its own tables.)
"""
import argparse
import json
import sys

TOLERANCE = 0.10
# The exchange probe's two states on the 2-CPU VM of 2026-12-04/05: 4-7 GB/s or 18-25 GB/s.
SLOW_BELOW_GBPS, FAST_ABOVE_GBPS = 8.0, 12.0


def change(this, reference):
    """this / reference - 1, or None where either is missing."""
    if this is None or not reference:
        return None
    return this / reference - 1


def cells(run, key):
    """{(ranks, size): value} of one table of a run; sizes keep the order they were written in."""
    table = run.get(key) or {}
    return {(int(n), size): value for n, row in table.items() for size, value in row.items()}


def within(delta, tolerance):
    return delta is not None and abs(delta) <= tolerance


def percent(delta):
    return "n/a" if delta is None else f"{delta * 100:+.0f}%"


def number(value):
    return "n/a" if value is None else f"{value:.2f}"


def exchange_text(run):
    spread = run.get("exchange_gbps_range")
    return number(run.get("exchange_gbps")) + (f" [{number(spread[0])}-{number(spread[1])}]" if spread else "")


def state(run):
    """The machine's state over a run, from its cross-core exchange probes (README, "Two states of the
    machine"): "slow" when every probe read below 8 GB/s, "fast" when every one read above 12, "mixed"
    otherwise, None for a run saved without probes."""
    spread = run.get("exchange_gbps_range")
    if not spread:
        return None
    if spread[1] < SLOW_BELOW_GBPS:
        return "slow"
    if spread[0] > FAST_ABOVE_GBPS:
        return "fast"
    return "mixed"


def report(reference, this, tolerance=TOLERANCE, out=sys.stdout):
    """Prints the cell-by-cell table and the verdict; returns True when every judged ratio is within."""
    print(f"\n## against {reference.get('label', 'the reference')} (within {tolerance * 100:.0f}% wanted)\n",
          file=out)
    ref_busbw, this_busbw = cells(reference, "busbw_xffl_over_mpi"), cells(this, "busbw_xffl_over_mpi")
    ref_cpu, this_cpu = cells(reference, "cpu_mpi_over_xffl"), cells(this, "cpu_mpi_over_xffl")
    sides = {side: (cells(reference, f"busbw_{side}"), cells(this, f"busbw_{side}")) for side in ("xffl", "mpi")}
    print("| ranks | size | busbw xffl/MPI, reference | this run | change | xffl's busbw moved | MPI's busbw moved "
          "| CPU MPI/xffl, reference | this run |", file=out)
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|", file=out)
    outside = []
    for key in ref_busbw:
        delta = change(this_busbw.get(key), ref_busbw[key])
        if not within(delta, tolerance):
            outside.append(f"{key[0]} ranks {key[1]} ({percent(delta)})")
        moved = " | ".join(percent(change(sides[side][1].get(key), sides[side][0].get(key))) for side in ("xffl", "mpi"))
        print(f"| {key[0]} | {key[1]} | {number(ref_busbw[key])} | {number(this_busbw.get(key))} | "
              f"{percent(delta)}{'' if within(delta, tolerance) else ' OUTSIDE'} | {moved} | "
              f"{number(ref_cpu.get(key))} | {number(this_cpu.get(key))} |", file=out)
    share_delta = change(this.get("memcpy_share"), reference.get("memcpy_share"))
    if reference.get("memcpy_share") is not None and not within(share_delta, tolerance):
        outside.append(f"memcpy share ({percent(share_delta)})")
    print(f"\nmemcpy share (xffl 64 MiB on 2 ranks / probe): reference {number(reference.get('memcpy_share'))}, "
          f"this run {number(this.get('memcpy_share'))}, {percent(share_delta)}", file=out)
    print(f"machine: memcpy probe (best, GB/s) reference {number(reference.get('memcpy_best_gbps'))}, this run "
          f"{number(this.get('memcpy_best_gbps'))}; a page fault (us) reference "
          f"{number(reference.get('fault_us_per_page'))}, this run {number(this.get('fault_us_per_page'))}; "
          f"memcpy on both cores at once (GB/s per core) reference {number(reference.get('memcpy_two_cores_mean_gbps'))}, "
          f"this run {number(this.get('memcpy_two_cores_mean_gbps'))}", file=out)
    print(f"machine: reference {reference.get('machine', 'n/a')}; this run {this.get('machine', 'n/a')}", file=out)
    print(f"machine: cross-core exchange probe (GB/s, median [range]) reference {exchange_text(reference)}, "
          f"this run {exchange_text(this)}", file=out)
    if reference.get("machine") and this.get("machine") and reference["machine"] != this["machine"]:
        print("machine: NOT THE SAME MACHINE (or booted again): its probes above say how far it differs", file=out)
    states = (state(reference), state(this))
    if None in states:
        print("machine: state unknown (a run saved without its exchange probes)", file=out)
    elif states[0] != states[1] or "mixed" in states:
        print(f"machine: NOT ONE STATE (reference {states[0]}, this run {states[1]}): the state alone moves cells "
              "by a quarter or more; the verdict below does not tell a change in xffl", file=out)
    else:
        print(f"machine: both runs in the {states[0]} state throughout", file=out)
    largest = max((abs(d) for d in (change(this_busbw.get(k), ref_busbw[k]) for k in ref_busbw) if d is not None),
                  default=None)
    print(f"largest busbw change: {'n/a' if largest is None else f'{largest * 100:.0f}%'}", file=out)
    if outside:
        print(f"verdict: {len(outside)} outside {tolerance * 100:.0f}%: {', '.join(outside)}", file=out)
    else:
        print(f"verdict: every ratio within {tolerance * 100:.0f}% of the reference", file=out)
    return not outside


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("reference")
    p.add_argument("this")
    p.add_argument("--tolerance", type=float, default=TOLERANCE)
    args = p.parse_args()
    with open(args.reference) as f:
        reference = json.load(f)
    with open(args.this) as f:
        this = json.load(f)
    return 0 if report(reference, this, args.tolerance) else 1


if __name__ == "__main__":
    sys.exit(main())
