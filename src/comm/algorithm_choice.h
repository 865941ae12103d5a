// Which algorithm a host collective of the UCX backend takes, by size and member count: the one table
// of crossovers, and the only place to change them. The numbers were measured on this project's
// machines with bench/peers/compare.py (the run is in bench/peers/README.md); a change here is a new
// measurement there.
//
//   members on one host (same host identity, pid namespace and network namespace, ucx/ucx_communicator.cpp):
//     allreduce       bytes <  host_segment_allreduce_below(n): the group's shared segment, flag and
//                                                               slot (ucx/host_collectives.h): no
//                                                               UCX message
//                     bytes >= host_pipeline_allreduce_from(n): the same segment in pipelined rounds
//                                                               (reduce-scatter + all-gather through
//                                                               the slots, host_collectives.h)
//                     (single_copy_allreduce_from(n): single copy, algorithms/single_copy.h, now
//                     only where the segment could not be set up)
//     reduce_scatter  the same two, by host_segment_reduce_scatter_below(n) and
//                     host_pipeline_reduce_scatter_from(n)
//     allgather, broadcast: the same two, by host_segment_<collective>_below(n) and
//                     host_pipeline_<collective>_from(n) (pipelined_allgather, pipelined_broadcast);
//                     barrier: always the segment
//     (the segment's sizes end where its rounds or single copy start: no size is left to the UCX
//     messages here)
//     the rounds copy out of the segment into the caller's output with streaming stores from
//     host_stream_output_from(n) bytes of it (streaming_copy.h)
//   members on several hosts (or reading peers' memory not allowed here): UCX messages,
//     allreduce       bytes <= small_allreduce_bytes: recursive doubling;
//                     bytes <= halving_allreduce_bytes(n): halving-doubling (Rabenseifner);
//                     else the pipelined ring (groups that cross facilities and the wan backend:
//                     no halving-doubling, its crossover was not measured over a WAN)
//     broadcast       bytes <= small_broadcast_bytes: binomial tree, else the pipelined chain
//     reduce_scatter, allgather: the pipelined ring
//
// On one host the middle sizes need no schedule of their own: the segment's rounds are already a
// reduce-scatter and an all-gather in two flag waits a round.
#ifndef XFFL_SRC_COMM_ALGORITHM_CHOICE_H
#define XFFL_SRC_COMM_ALGORITHM_CHOICE_H

#include <cstddef>

namespace xffl::comm::algorithm_choice {

constexpr size_t kKiB = 1024;

// Across hosts (UCX messages).
constexpr size_t small_allreduce_bytes = 64 * kKiB;   // at most this: recursive doubling, else ring
constexpr size_t small_broadcast_bytes = 256 * kKiB;  // at most this: binomial tree, else chain
// Above small_allreduce_bytes and at most this (whole buffer): halving-doubling (Rabenseifner,
// algorithms/schedules.h), else the ring, by member count. Measured 2026-12-04 with
// bench/peers/across_hosts_allreduce (thread-ranks over UCX messages, each schedule forced at every
// size, interleaved, 3-7 runs, load 1.5-6; bench/peers/README.md, "Across hosts: halving-doubling"),
// the time per call of halving-doubling over the ring's:
//   shared memory: 4 ranks 0.64-0.93 from 64 to 256 KiB, 0.87-1.08 from 512 KiB to 4 MiB, 0.78-0.93 at 8
//   and 16 MiB, 0.95 / 1.05 at 32 / 64 MiB; 8 ranks 0.76-0.92 to 256 KiB, 0.86-1.08 to 4 MiB, 0.76-0.89
//   at 8 and 16 MiB, 1.02 / 1.08 at 32 / 64 MiB; 5 ranks 0.80-0.92 to 512 KiB; 6 ranks 0.71-0.95 to
//   256 KiB, 1.06-1.18 from 512 KiB to 4 MiB (the folded pairs send the whole buffer twice more);
//   3 ranks 1.00-2.20 everywhere (a folded pair and one step of two: the ring's step count, more bytes);
//   TCP over loopback: 4 ranks 0.58-0.93 from 32 KiB to 16 MiB, 8 ranks 0.45-0.86 from 64 KiB to 16 MiB,
//   6 ranks 0.34-0.91 from 64 KiB to 4 MiB.
// So: none below 4 members; powers of two to 16 MiB (where its scratch, half the buffer, is still the
// ring's staging of 8 chunks), the others to 256 KiB. Recursive doubling keeps up to 64 KiB:
// halving-doubling took 1.10-1.13x its time at 64 KiB and 0.90-0.98x at 128 KiB (shared memory, 4-8
// ranks).
// Members on two facilities (WORLD of a multi-facility job; groups marked as crossing keep the ring):
// halving-doubling exchanges with its nearest partners first (halving_doubling.cpp), so only the
// smallest blocks cross the link. Over the simulated link (1 Gbit/s, 20 ms round trip, 2 + 2 ranks;
// bench/facilities/world_allreduce.sh, bench/facilities/README.md "A sum over WORLD across the link"):
// 0.66-0.75 of the ring's time from 256 KiB to 16 MiB, with 2/3 of the ring's bytes on the link;
// farthest partners first had moved 4/3 of them and taken 1.12x the ring's time at 16 MiB.
constexpr bool is_power_of_two(int members) { return members > 0 && (members & (members - 1)) == 0; }
constexpr size_t halving_allreduce_bytes(int members) {
  if (members < 4) return 0;
  return is_power_of_two(members) ? 16 * 1024 * kKiB : 256 * kKiB;
}
constexpr size_t ring_chunk_bytes = 1024 * kKiB;      // the ring's and chain's message (pipelining unit)
constexpr int ring_window = 8;                        // receives the ring posts ahead
// The same window on the wan crossing backend (comm/wan), between facilities: what a crossing keeps
// in flight each way must cover the link's bandwidth-delay product, and a ring member sends its next
// chunk only once one of its neighbour's has arrived, a round trip after that neighbour sent it.
// 32 chunks (32 MiB; the ring's staging holds as many, at most one per chunk it reduces) cover
// 1 Gbit/s at 250 ms of round trip or 10 Gbit/s at 25 ms; a larger XFFL_WAN_BDP raises it to twice
// the BDP (wan_communicator.cpp). Measured 2026-12-03 (bench/facilities/README.md, "The compressed hop
// streams"): 64 MiB over 1 Gbit/s at 100 ms, 16 streams, 414-451 Mbit/s with 8, 505-521 with 32,
// 511-526 with 64.
constexpr int wan_ring_window = 32;

// On one host: the smallest buffer that takes the single-copy schedule (the whole buffer of an
// allreduce or broadcast, the whole gathered or scattered buffer of allgather and reduce_scatter, in
// bytes of its dtype), by member count; below it, the shared segment below. Measured on 2 and 4 ranks
// (2 cores, load 19-21, bench/peers/README.md, "Small sizes on one host") as the size from which
// single copy took less wall time than the segment, and about as much CPU per call or less (the
// segment has every member read every slot: its reads grow with the members, single copy's do not);
// 3 members and more take the 4-rank value. Before the segment, against the UCX messages, they were
// 256 KiB / 64 KiB (allreduce), 512 KiB / 64 KiB (allgather), 256 KiB (broadcast).
constexpr size_t single_copy_allreduce_from(int members) { return members <= 2 ? 1024 * kKiB : 1024 * kKiB; }
constexpr size_t single_copy_allgather_from(int members) { return members <= 2 ? 512 * kKiB : 1024 * kKiB; }
constexpr size_t single_copy_reduce_scatter_from(int members) { return single_copy_allgather_from(members); }
constexpr size_t single_copy_broadcast_from(int members) { return members <= 2 ? 2048 * kKiB : 1024 * kKiB; }
// On one host, below those sizes: the shared segment (ucx/host_collectives.h: each member copies its
// buffer into its slot, publishes a flag, and reads the others' slots; no UCX message). It takes over
// every size below the single-copy crossover of each collective, where the UCX messages were before.
constexpr size_t host_segment_allreduce_below(int members) { return single_copy_allreduce_from(members); }
constexpr size_t host_segment_allgather_below(int members) { return single_copy_allgather_from(members); }
constexpr size_t host_segment_reduce_scatter_below(int members) { return single_copy_reduce_scatter_from(members); }
constexpr size_t host_segment_broadcast_below(int members) { return single_copy_broadcast_from(members); }
// A member's slot: the most any of them puts there (an allgather member its own block, reduce_scatter
// its whole send buffer).
constexpr size_t host_segment_slot_bytes(int members) {
  size_t most = host_segment_allreduce_below(members);
  if (host_segment_reduce_scatter_below(members) > most) most = host_segment_reduce_scatter_below(members);
  if (host_segment_broadcast_below(members) > most) most = host_segment_broadcast_below(members);
  return most;  // allgather's block is its whole buffer / members: less than reduce_scatter's
}
// A call spins this long in all on the other members' flags before it sleeps on them (futex): enough
// for a peer that runs on another core to arrive, short enough not to take a shared core from a peer
// that waits to run. Measured at load 20 on 2 cores (2 and 4 ranks, 4-64 KiB): 0 and 2 us took the
// least CPU per call and wall time, 5 us more, 10 us (the first guess) up to twice the CPU, 30 us
// three to four times.
constexpr long host_segment_spin_ns = 2 * 1000;
// Then, before sleeping on a member's flag, a call gives its core away this many times
// (sched_yield): with more members than cores the member awaited often waits for this very core,
// and a futex sleep and wake-up cost both sides a few microseconds more. Measured at load 15-17 on
// 2 cores against none: 4 KiB on 4 ranks 6.9 -> 4.2 us of CPU and 36 -> 15 us per call, on 2 ranks
// 4.0 -> 2.7 us; 16 and 64 yields were no better.
constexpr int host_segment_yields = 4;
// A yield that comes back within host_segment_idle_yield_ns found no other task wanting this core:
// sleeping now would leave it idle, and on a virtual machine a futex sleep that idles a core and its
// wake-up cost the most of anything in a wait (measured here: two threads on the two cores bouncing
// a futex took 65 us of CPU and 108 us per wake-up, 3 us on one core). Within
// host_segment_woken_window_ns of waking a member asleep on one of its flags, a member does not count
// such yields against host_segment_yields: it keeps watching the flag, yielding every
// host_segment_idle_yield_every_ns, for up to host_segment_idle_spin_ns in all before it counts its
// yields and sleeps as before. Without it two members on two otherwise idle cores could fall into a
// state where one of them slept in every call and woke the other late, so that the other slept in the
// next: 45-60 us of CPU per 4 KiB call instead of 3-8 (bench/peers/README.md, "Small sizes: the two
// modes"). With more members than cores, or other work on this core, a yield hands the core over,
// takes longer than this, and the wait goes on as before; a member that did not just wake anyone
// (its peer is late in its own work) sleeps as before.
constexpr long host_segment_idle_yield_ns = 4 * 1000;
constexpr long host_segment_idle_yield_every_ns = 5 * 1000;
constexpr long host_segment_idle_spin_ns = 150 * 1000;
constexpr long host_segment_woken_window_ns = 500 * 1000;

// On one host, the allreduce from this size (whole buffer) goes through the shared segment in rounds
// (ucx/host_collectives.h, pipelined_allreduce) instead of single copy, which it replaces at every
// size single copy took: measured 2026-12-02 (bench/peers/README.md, "The pipelined allreduce"),
// interleaved against single copy at load 5-10, CPU per call 1.7-2.0x less on 2 ranks and 2.3-3.8x
// less on 4 from 1 to 64 MiB. Below 1 MiB the slots stayed: pipelined from 64 KiB against them, 2 ranks
// 29 / 18 us (64 KiB) and 39 / 33 us (256 KiB) of CPU per call, 4 ranks 44 / 41 and 73 / 78 us, with
// less busbw in all four (load 6). Measured again on 2026-12-03 (bench/peers/README.md, "The pipelined
// allreduce from 64 KiB on 2 ranks"), the segment's waits changed since: on 2 ranks the rounds took
// 1.4-2.6x the busbw of the slots from 64 KiB to 512 KiB, with less CPU, quiet and with two busy
// loops on the 2 cores; on 4 ranks they won from 256 KiB when quiet but lost 2.5x with the busy loops
// (4 ranks on 2 cores wait for a core at each of a round's two flags): 4 ranks kept 1 MiB. Then a
// pipelined allreduce right after another stopped meeting the others first (two flag waits a round,
// not three for a one-round call), and the same comparison, interleaved against the slots (evening of
// 2026-12-03, "Back to back without meeting" there), moved both: 2 ranks from 16 KiB (16 and 32 KiB
// 1.3x the busbw and 0.85x the CPU per call; 4 and 8 KiB the slots ahead), 4 ranks from 64 KiB (64 KiB
// to 512 KiB 1.3-2.5x the busbw and 0.6-0.75x the CPU; 16 and 32 KiB a draw; with two busy loops on
// the 2 cores the slots keep 1.4-1.8x the rounds' busbw from 64 to 512 KiB, and Open MPI has 0.15-0.4x
// the rounds' there). 3 members take the 4-rank value.
constexpr size_t host_pipeline_allreduce_from(int members) { return members <= 2 ? 16 * kKiB : 64 * kKiB; }
// The same for reduce_scatter (whole send buffer): the same rounds without the copy out, from single
// copy's crossover on, replacing it: measured 2026-12-02 interleaved against single copy (f32 SUM,
// 5-7 runs, load 4-5), CPU us per call single copy / rounds: 2 ranks 123 / 59 (512 KiB), 328 / 174
// (2 MiB), 613 / 421 (4 MiB), 15836 / 8534 (64 MiB), 1 MiB a draw (200 / 214, runs spread 88-297);
// 4 ranks 413 / 146 (1 MiB), 1248 / 430 (4 MiB), 5243 / 2386 (16 MiB), 17861 / 8353 (64 MiB).
constexpr size_t host_pipeline_reduce_scatter_from(int members) { return single_copy_reduce_scatter_from(members); }
// The same for broadcast (whole buffer) and allgather (whole gathered buffer): the rounds copy each
// part into the owner's slot and out of it (no reduction), from single copy's crossovers on,
// replacing it (bench/peers/README.md, "Pipelined broadcast and allgather").
constexpr size_t host_pipeline_broadcast_from(int members) { return single_copy_broadcast_from(members); }
constexpr size_t host_pipeline_allgather_from(int members) { return single_copy_allgather_from(members); }
// The most one member's part of a round holds (its operands staged and its result stay in the cache);
// also bounded by the slot (host_segment_slot_bytes / members). 64 KiB and 1 MiB (2 ranks; 4 ranks
// are bounded to 256 KiB by the slot) measured against it at load 7-8: 64 KiB took 1.4x the CPU at
// 64 MiB, 1 MiB was within the noise (less at 64 MiB, more at 1 and 4 MiB). Again on 2026-12-04 in both
// states of a VM whose two cores sometimes share a last-level cache and sometimes do not (bench/peers/
// README.md, "Two states of the machine"), 2 ranks: 1 MiB parts 7-19% more busbw from 1 to 16 MiB
// where they do not and 14-33% less where they do; 32-128 KiB parts less (0.54-1.01x) where they do not.
constexpr size_t host_pipeline_chunk_bytes = 256 * kKiB;
// Spinning budget of each of a round's two waits before yielding and sleeping (host_segment_spin_ns).
// 0, 2 and 20 us measured at load 6-7: 0 and 2 alike, 20 up to 1.4x the CPU per call.
constexpr long host_pipeline_spin_ns = 2 * 1000;
// A pipelined call whose output (the caller's buffer it writes: allreduce's and broadcast's whole
// buffer, allgather's gathered one, reduce_scatter's block) has at least this many bytes copies into it
// with streaming stores (streaming_copy.h), by member count (but an allreduce's own part: its reduction
// makes it there with plain stores, bench/peers/README.md, "The result through the output"). Measured
// 2026-12-04 on 2 cores (bench/peers/README.md, "Streaming stores into the output"). The call alone
// (bench/peers/ab_collectives.py --bind against the same tree without them, busbw with / without, 3-6
// runs each): from 64 MiB 1.07-1.36x in every collective on 2 and 4 ranks (allgather 1.31-1.53x) but
// broadcast on 2 ranks at 256 MiB (0.93-0.99x, with 11-13% less CPU); 32 MiB on 2 ranks allreduce
// 1.15x, broadcast and allgather 0.99x; 16 MiB on 4 ranks allreduce 1.19x. But the caller then reads
// its output from memory where ordinary stores may have left some of it in the cache, so the crossover
// is where an allreduce followed by one read of its output (bench/peers/allreduce_then_read.c, a
// training step's optimizer) took less time in all. First (71e2f17, three batches of 3-6 runs each, the
// time with / without): on 2 ranks 32 MiB +7%, -6%, +12%; 48 MiB -9%, -11%, +1%; 64 MiB -10%, -11%; on
// 3 ranks 16 MiB +8%, -1%, +2%; 24 MiB -5%, -5%, -5%; on 4 ranks 16 MiB -4%, +1%, -1%; 24 MiB -9%, -6%:
// 48 / 24 MiB. Again once the rounds' copies out had become cheaper (ab1d6a5: interleaved with the
// staging, fused with the last combination), 2026-12-04 09:24-09:27 UTC, three batches of 6-8 runs: on
// 2 ranks 32 MiB +6%, 36 MiB -1%, -1%, 40 MiB -6%, -6%, -7%, 44 MiB -11%; on 3 ranks 16 MiB +9%, 20 MiB
// +3%, 0%, -2%; on 4 ranks 16 MiB +3%, -1%, -3%, 20 MiB -12%, -9%, -11%: the smallest size where the
// step took less time in every batch, or as much on the mean (3 ranks at 20 MiB).
constexpr size_t host_stream_output_from(int members) { return members <= 2 ? 40 * 1024 * kKiB : 20 * 1024 * kKiB; }

// What the single-copy reduction reads from a peer at once: its accumulator and the peer's chunk stay
// in the L2 cache between the read and the reduction.
constexpr size_t single_copy_chunk_bytes = 128 * kKiB;

}  // namespace xffl::comm::algorithm_choice

#endif
