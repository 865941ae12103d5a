// The WAN hop of a federated average: the collective over the FEDERATED group, which crosses
// facilities (HIERARCHICAL: the senders; FLAT: every rank). With XFFL_WIRE_F32 it is the exact f32
// allreduce, unchanged. With another format, for XFFL_F32 data over two or more federated groups:
//   1. each participant scales its copy by its FedAvg factor, adds its residual (error feedback),
//      and quantises it once (wire_format.h);
//   2. the compressed bytes are all-gathered over the FEDERATED group (as bytes), in windows: each
//      window is quantised just before it leaves and step 3 runs on each window as soon as
//      every member's bytes of it are in (Communicator::allgather_streamed), so that the coding runs
//      while the link is busy instead of before and after it;
//   3. every participant decodes the G contributions and sums them in f32 in member order 0..G-1, then
//      divides by G: the same bytes in the same order, so the mean is bit-identical everywhere and
//      nothing is quantised twice (a ring of quantised partial sums would round at every hop);
//   4. with error feedback, the residual becomes what this participant meant to send minus what it sent.
// Bytes each participant sends, in models of 4N bytes: the f32 ring allreduce 2(G-1)/G; the
// all-gather (G-1) x the format's size: BF16/F16 (G-1)/2, INT8_BLOCK (G-1) x 0.254, INT4_BLOCK
// (G-1) x 0.141. So BF16/F16 move fewer bytes for G <= 3 (equal at 4), INT8_BLOCK for G <= 7 (3.9x fewer
// at G = 2, 2.6x at 3), INT4_BLOCK for G <= 14. Federations are a few facilities; past those G the
// exact F32 ring is also the cheaper one.
// Device memory (NCCL) takes this hop only where the FEDERATED group is staged through a host backend
// (comm::HostStaging: XFFL_OPT_CROSS_FACILITY_BACKEND, UCX or any host backend): the buffer goes to the
// host in windows of 16 MiB (the staging's pinned buffer) as step 2's bytes are about to leave over the
// host communicator, steps 1 and 3 run there, each window of the mean comes back on the stream as it is
// decoded; residuals stay on the host. On a FEDERATED group
// that runs on NCCL itself the codecs, which run on the host, have no host copy: XFFL_EUNSUPPORTED.
// Host scratch for the call: the G + 1 compressed copies (the f32 work runs in cache-sized chunks of
// whole blocks, which encode to contiguous bytes, wire_format.h). The relay to non-senders
// (HIERARCHICAL with HSDP, cross_and_relay) follows the crossing, whose decoding already overlapped
// the slower link (before 2026-12-03 the relay overlapped step 3 instead, after the whole crossing).
#ifndef XFFL_SRC_FEDERATED_WIRE_WAN_HOP_H
#define XFFL_SRC_FEDERATED_WIRE_WAN_HOP_H

#include <cstddef>

#include "federated/strategy.h"

namespace xffl::federated::wire {

// Values per device <-> host copy when the buffer is device memory (staged): 16 MiB of f32 in the
// staging communicator's pinned buffer, whatever the model size; the staged hop streams in windows of
// this many values.
constexpr size_t kStagedWindowValues = size_t{4} << 20;

// Whether an average of `count` values of `dtype` takes the compressed hop: a non-F32 format, XFFL_F32
// data (other dtypes travel exact), two or more federated groups (one group has no WAN hop), count > 0.
bool compresses(const Roles &roles, size_t count, xffl_dtype_t dtype);

// XFFL_EUNSUPPORTED, on every rank before any message, for a compressing format on device memory
// (NCCL) whose crossing groups run on NCCL (not host_crossing): the codecs run on the host.
void require_supported(const Roles &roles, xffl_dtype_t dtype);

// The WAN hop in place: the XFFL_AVG over roles.federated of each member's weight_factor * buf, exact
// or compressed as above. Called by every member of the FEDERATED group with the same count.
void cross_facilities(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream);

// HIERARCHICAL with HSDP, for a call that compresses: cross_facilities on the senders, whose mean
// then reaches the other members of their REPLICA group. Called by every member of the REPLICA group
// with the same count.
void cross_and_relay(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream);

}  // namespace xffl::federated::wire

#endif
