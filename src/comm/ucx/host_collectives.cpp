#include "comm/ucx/host_collectives.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "comm/algorithm_choice.h"
#include "comm/algorithms/windows.h"
#include "comm/algorithms/chunks.h"
#include "comm/algorithms/scratch.h"
#include "comm/dtype.h"
#include "comm/reduce.h"
#include "comm/streaming_copy.h"

namespace xffl::comm::ucx {

namespace {

// What member 0 sends every member when it has made the segment (ok = 0: it could not).
struct Offer {
  int64_t pid = 0;
  int32_t descriptor = -1;
  int32_t ok = 0;
};

// Setting up takes two rounds of messages inside the call; the call itself none.
constexpr algorithms::Step kOfferStep{0, 2}, kAnswerStep{1, 2};

}  // namespace

bool HostCollectives::ready(UcxTransport &p2p, std::string *why) {
  if (segment_) return true;
  if (refused_) return false;
  const size_t slot_bytes = algorithm_choice::host_segment_slot_bytes(members_);
  std::unique_ptr<HostSegment> segment;
  Offer offer;
  if (me_ == 0) {
    segment = HostSegment::create(members_, me_, slot_bytes, p2p.sequence(), why);
    offer.pid = static_cast<int64_t>(getpid());
    offer.descriptor = segment ? segment->descriptor() : -1;
    offer.ok = segment ? 1 : 0;
    for (int peer = 1; peer < members_; ++peer) p2p.send(peer, &offer, sizeof offer, kOfferStep);
  } else {
    p2p.wait(p2p.recv(0, &offer, sizeof offer, kOfferStep));
    if (offer.ok)
      segment = HostSegment::open(static_cast<long>(offer.pid), offer.descriptor, members_, me_, slot_bytes, why);
    else
      *why = "member 0 could not make it";
  }
  // Every member tells every other whether it has it: the verdict is the same everywhere. Member 0
  // keeps its descriptor open until every member has answered (opened it or given up).
  const int32_t mine = segment ? 1 : 0;
  std::vector<int32_t> answers(static_cast<size_t>(members_), 0);
  for (int peer = 0; peer < members_; ++peer)
    if (peer != me_) p2p.recv(peer, &answers[static_cast<size_t>(peer)], sizeof(int32_t), kAnswerStep);
  for (int peer = 0; peer < members_; ++peer)
    if (peer != me_) p2p.send(peer, &mine, sizeof mine, kAnswerStep);
  p2p.wait_all();
  answers[static_cast<size_t>(me_)] = mine;
  if (segment) segment->close_descriptor();
  for (int member = 0; member < members_; ++member)
    if (!answers[static_cast<size_t>(member)]) {
      if (why->empty()) *why = "member " + std::to_string(member) + " could not open it";
      refused_ = true;
      return false;
    }
  segment_ = std::move(segment);
  return true;
}

void HostCollectives::wait_for(UcxTransport &p2p, int member, HostSegment::Flag flag, uint32_t value,
                               algorithms::Step step, std::chrono::steady_clock::time_point spin_end) {
  const HostSegment &segment = *segment_;
  auto there = [&] { return segment.reached(member, flag, value); };
  if (there() || segment.spin(member, flag, value, spin_end) || segment.yield(member, flag, value)) return;
  do p2p.check_wait(member, step, std::ref(there));  // a std::function of a reference: no allocation
  while (!segment.sleep(member, flag, value));
}

void HostCollectives::wait_for_others(UcxTransport &p2p, HostSegment::Flag flag, uint32_t value, algorithms::Step step,
                                      std::chrono::steady_clock::time_point spin_end) {
  for (int member = 0; member < members_; ++member)
    if (member != me_) wait_for(p2p, member, flag, value, step, spin_end);
}

void HostCollectives::enter(UcxTransport &p2p, const CallSignature &signature, const void *data, size_t bytes,
                           algorithms::Step step) {
  HostSegment &segment = *segment_;
  const uint32_t sequence = p2p.sequence();
  std::optional<uint32_t> &previous = last_published_[sequence & 1u];
  // One spinning budget for the call, from its start: with more members than cores, a member that
  // spun in vain for one peer (descheduled) would spin in vain for the next.
  const auto spin_end = p2p.started() + std::chrono::nanoseconds(algorithm_choice::host_segment_spin_ns);
  // My slot of this parity is free once every member has finished reading the call that last used
  // it: their "done" flags, unless every member met at a later call (after a call on the segment,
  // always): each arrived there only after finishing the one before, and the flags need not be read
  // (lines their members wrote since).
  const bool met_since = previous && last_met_ && static_cast<int32_t>(*last_met_ - *previous) > 0;
  if (previous && !met_since)
    for (int member = 0; member < members_; ++member)
      if (member != me_) {
        wait_for(p2p, member, HostSegment::Flag::done, *previous, step, spin_end);
        ++done_flags_read_;
      }
  if (bytes) std::memcpy(segment.contribution(me_, sequence, bytes), data, bytes);
  segment.publish(sequence, signature);
  previous = sequence;
  for (int member = 0; member < members_; ++member) {
    if (member == me_) continue;
    wait_for(p2p, member, HostSegment::Flag::arrived, sequence, step, spin_end);
    check_signature(p2p, member, signature);
  }
  last_met_ = sequence;
}

void HostCollectives::check_signature(UcxTransport &p2p, int member, const CallSignature &signature) const {
  const CallSignature theirs = segment_->signature(member, p2p.sequence());
  if (theirs != signature) p2p.disagree_with(member, theirs);
}

void HostCollectives::allreduce(UcxTransport &p2p, const CallSignature &signature, const void *send, void *recv,
                                size_t count, xffl_dtype_t dtype, xffl_redop_t op) {
  const size_t bytes = count * dtype_size(dtype);
  enter(p2p, signature, send, bytes);
  reduce_slots(p2p, bytes, 0, count, dtype, op, recv);
  segment_->finish_reading(p2p.sequence());
}

template <typename Operand>
void HostCollectives::reduce_operands(const Operand &operand, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                                      unsigned char *scratch, unsigned char *result) const {
  const xffl_dtype_t type = accumulation_dtype(dtype, op);
  if (type == dtype) {  // no widening: straight into result (AVG divides it once at the end)
    const unsigned char *left = operand(0);
    for (int member = 1; member < members_; ++member) {
      combine(result, left, operand(member), count, type, op);
      left = result;
    }
    if (op == XFFL_AVG) divide(result, count, type, members_);
    return;
  }
  unsigned char *accumulator = scratch;
  unsigned char *wide = accumulator + count * dtype_size(type);
  convert(operand(0), dtype, accumulator, type, count);
  for (int member = 1; member < members_; ++member) {
    convert(operand(member), dtype, wide, type, count);
    combine(accumulator, accumulator, wide, count, type, op);
  }
  if (op == XFFL_AVG) divide(accumulator, count, type, members_);
  convert(accumulator, type, result, dtype, count);
}

void HostCollectives::reduce_slots(UcxTransport &p2p, size_t contributed, size_t first, size_t count,
                                   xffl_dtype_t dtype, xffl_redop_t op, void *out) {
  const HostSegment &segment = *segment_;
  const uint32_t sequence = p2p.sequence();
  const size_t offset = first * dtype_size(dtype);
  auto part = [&](int member) -> const unsigned char * {
    return segment.contribution(member, sequence, contributed) + offset;
  };
  const xffl_dtype_t type = accumulation_dtype(dtype, op);
  std::optional<algorithms::Scratch> scratch;
  if (type != dtype) scratch.emplace(p2p, 2 * count * dtype_size(type));
  reduce_operands(part, count, dtype, op, scratch ? scratch->data() : nullptr, static_cast<unsigned char *>(out));
}

// Round r of a call covers `block` elements from `base`, split into balanced parts (balanced_bounds):
// member i reduces part i. In member j's slot of the round's parity, region i (i != j) holds j's
// operand of part i and region j the reduced part j (each region `region_bytes`).
void HostCollectives::pipelined_allreduce(UcxTransport &p2p, const CallSignature &signature, const void *send,
                                          void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                                          RoundOptions options) {
  using Flag = HostSegment::Flag;
  HostSegment &segment = *segment_;
  const size_t element = dtype_size(dtype);
  const xffl_dtype_t type = accumulation_dtype(dtype, op);
  // Right after a pipelined allreduce on this group, no meeting first: the rounds' own flags say when a
  // region may be written (below, across calls as within one), and the signatures are compared once
  // round 0 is staged (every member publishes its arrival before it stages), before any slot is read.
  const uint32_t sequence = p2p.sequence();
  const bool follows_allreduce = last_pipelined_allreduce_ && *last_pipelined_allreduce_ + 1 == sequence;
  const Pipeline plan = follows_allreduce
                            ? continue_pipelined_calls(p2p, signature, options, element, count,
                                                       static_cast<size_t>(members_))
                            : start_pipelined_call(p2p, signature, options, element, count,
                                                   static_cast<size_t>(members_));
  const size_t round_elements = plan.part_elements * static_cast<size_t>(members_), rounds = plan.rounds;

  const auto *input = static_cast<const unsigned char *>(send);
  auto *output = static_cast<unsigned char *>(recv);
  // Widening reduces through scratch (one part, as accumulator and operand).
  std::optional<algorithms::Scratch> scratch;
  if (type != dtype) scratch.emplace(p2p, 2 * plan.part_elements * dtype_size(type));
  const auto spin = std::chrono::nanoseconds(algorithm_choice::host_pipeline_spin_ns);

  // Round r's parts: member i reduces elements [first_of(r, i), first_of(r, i) + length_of(r, i)).
  auto bounds_of = [&](size_t r) {
    const size_t base = r * round_elements;
    return algorithms::balanced_bounds(std::min(round_elements, count - base), members_);
  };
  std::vector<size_t> bounds = bounds_of(0), next_bounds;
  auto first_of = [&](const std::vector<size_t> &of, size_t r, int member) {
    return r * round_elements + of[static_cast<size_t>(member)];
  };
  auto length_of = [&](const std::vector<size_t> &of, int member) {
    return of[static_cast<size_t>(member) + 1] - of[static_cast<size_t>(member)];
  };
  // Stage round r's operand of member's part: region `member` of my slot of r's parity.
  auto stage = [&](const std::vector<size_t> &of, size_t r, int member) {
    return CopyRange{plan.region(me_, round_ + static_cast<uint32_t>(r), member), input + first_of(of, r, member) * element,
                     length_of(of, member) * element};
  };

  // Round 0's operands. Region i of my slot was last read by member i when it reduced round - 2; it
  // had reduced round - 1 before I copied that round out. Rounds - 1 and - 2 may be a previous call's:
  // a pipelined allreduce right before this one (the same rounds), or any call that every member
  // finished before this call's signatures were compared (the meeting of start_pipelined_call; after
  // it the rounds' rule holds from this call's round 0).
  for (int member = 0; member < members_; ++member)
    if (member != me_ && length_of(bounds, member)) {
      const CopyRange operand = stage(bounds, 0, member);
      std::memcpy(operand.to, operand.from, operand.bytes);
    }
  segment.publish_round(Flag::staged, round_);

  for (size_t r = 0; r < rounds; ++r) {
    const uint32_t round = round_ + static_cast<uint32_t>(r);
    const bool last = r + 1 == rounds;
    if (!last) next_bounds = bounds_of(r + 1);

    // Reduce my part, reading every member's operand in member order. Every member staged this round
    // after copying out round - 1 (and so round - 2): my result region is free.
    auto spin_end = std::chrono::steady_clock::now() + spin;
    wait_for_others(p2p, Flag::staged, round, plan.step(r, 0), spin_end);
    if (r == 0 && follows_allreduce)
      for (int member = 0; member < members_; ++member)
        if (member != me_) check_signature(p2p, member, signature);
    const size_t mine = length_of(bounds, me_);
    if (mine) {
      const unsigned char *my_operand = input + first_of(bounds, r, me_) * element;
      unsigned char *my_output = output + first_of(bounds, r, me_) * element;
      unsigned char *result = plan.region(me_, round, me_);
      // The result is made in my output, whose lines only this core has touched, and memcpy'd into my
      // result region: the region was last read on the other members' cores, and the reduction's
      // vector stores would first fetch each of its lines back from there (read for ownership), where
      // glibc's memcpy (rep movsb at these sizes) writes whole lines without reading them. 2 ranks,
      // where the cores do not share the last-level cache: 1.32x busbw at 1 MiB, 1.85x at 4 MiB, 1.24x
      // at 16 MiB, 1.25x at 64 MiB; where they do, even to 16 MiB and 0.84-0.91x from 64 MiB, where
      // the own part is no longer streamed into the output (bench/peers/README.md, "The result
      // through the output").
      // In place and not widened, the combinations before my operand's turn (members 0 .. me_ - 1,
      // from member 2 on) would overwrite it in my output: it is read from my result region, memcpy'd
      // there first.
      const bool keep_my_operand = my_operand == my_output && me_ >= 2 && type == dtype;
      if (keep_my_operand) std::memcpy(result, my_operand, mine * element);
      reduce_operands(
          [&](int member) -> const unsigned char * {
            if (member != me_) return plan.region(member, round, me_);
            return keep_my_operand ? result : my_operand;
          },
          mine, dtype, op, scratch ? scratch->data() : nullptr, my_output);
      std::memcpy(result, my_output, mine * element);
      reduced_in_output_bytes_ += mine * element;
    }
    segment.publish_round(Flag::reduced, round);

    // Copy the others' parts out, starting at the next member (readers spread over the members), each
    // after staging my operand of that member's part of the next round (copy_out_staging): region
    // `owner` of my slot of round + 1's parity was last read by the owner when it reduced round - 1,
    // before the "reduced" of this round awaited here.
    spin_end = std::chrono::steady_clock::now() + spin;
    for (int k = 1; k < members_; ++k) {
      const int owner = (me_ + k) % members_;
      wait_for(p2p, owner, Flag::reduced, round, plan.step(r, 1), spin_end);
      const CopyRange part{output + first_of(bounds, r, owner) * element, plan.region(owner, round, owner),
                           length_of(bounds, owner) * element};
      copy_out_staging(plan, part, last ? CopyRange{nullptr, nullptr, 0} : stage(next_bounds, r + 1, owner));
    }
    if (!last) {
      segment.publish_round(Flag::staged, round + 1);
      bounds.swap(next_bounds);
    }
  }
  end_pipelined_call(p2p, plan);
  last_pipelined_allreduce_ = sequence;
}

// Round r covers elements [r * part, (r + 1) * part) of every member's block: member j stages its
// operands of the others' blocks in region i of its slot, member i reduces its own into region i of
// its own slot (never an operand: recv may be the caller's own block of send) and copies it out.
void HostCollectives::pipelined_reduce_scatter(UcxTransport &p2p, const CallSignature &signature, const void *send,
                                               void *recv, size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op,
                                               RoundOptions options) {
  using Flag = HostSegment::Flag;
  HostSegment &segment = *segment_;
  const size_t element = dtype_size(dtype);
  const xffl_dtype_t type = accumulation_dtype(dtype, op);
  const Pipeline plan = start_pipelined_call(p2p, signature, options, element, recv_count, 1);
  const size_t part_elements = plan.part_elements, rounds = plan.rounds;

  const auto *input = static_cast<const unsigned char *>(send);
  auto *output = static_cast<unsigned char *>(recv);
  std::optional<algorithms::Scratch> scratch;
  if (type != dtype) scratch.emplace(p2p, 2 * part_elements * dtype_size(type));
  const auto spin = std::chrono::nanoseconds(algorithm_choice::host_pipeline_spin_ns);

  for (size_t r = 0; r < rounds; ++r) {
    const uint32_t round = round_ + static_cast<uint32_t>(r);
    const size_t first = r * part_elements;
    const size_t length = std::min(part_elements, recv_count - first);
    auto spin_end = std::chrono::steady_clock::now() + spin;
    // Region i of my slot was last read by member i when it reduced round - 2 (earlier calls: every
    // member finished them before this call's signatures were compared).
    if (r >= 2)
      wait_for_others(p2p, Flag::reduced, round - 2, plan.step(r, 0), spin_end);
    for (int member = 0; member < members_; ++member)
      if (member != me_)
        std::memcpy(plan.region(me_, round, member), input + (static_cast<size_t>(member) * recv_count + first) * element,
                    length * element);
    segment.publish_round(Flag::staged, round);

    spin_end = std::chrono::steady_clock::now() + spin;
    wait_for_others(p2p, Flag::staged, round, plan.step(r, 1), spin_end);
    unsigned char *result = plan.region(me_, round, me_);
    reduce_operands(
        [&](int member) -> const unsigned char * {
          return member == me_ ? input + (static_cast<size_t>(me_) * recv_count + first) * element
                               : plan.region(member, round, me_);
        },
        length, dtype, op, scratch ? scratch->data() : nullptr, result);
    copy_out(plan, output + first * element, result, length * element);
    segment.publish_round(Flag::reduced, round);
  }
  end_pipelined_call(p2p, plan);
}

// Round r covers bytes [r * part, (r + 1) * part) of the buffer: the root copies them into region 0
// of its slot of the round's parity ("staged"), every other member copies them out and publishes
// "reduced" (read). The root stages round r only once every member has read round r - 2 (the same
// region; earlier calls: every member finished them before this call's signatures were compared).
void HostCollectives::pipelined_broadcast(UcxTransport &p2p, const CallSignature &signature, void *buffer,
                                          size_t bytes, int root, RoundOptions options,
                                          algorithms::WindowProducer *producer) {
  using Flag = HostSegment::Flag;
  HostSegment &segment = *segment_;
  const Pipeline plan = start_pipelined_call(p2p, signature, options, 1, bytes, 1);
  auto *data = static_cast<unsigned char *>(buffer);
  const auto spin = std::chrono::nanoseconds(algorithm_choice::host_pipeline_spin_ns);
  for (size_t r = 0; r < plan.rounds; ++r) {
    const uint32_t round = round_ + static_cast<uint32_t>(r);
    const size_t first = r * plan.part_elements;
    const size_t length = std::min(plan.part_elements, bytes - first);
    const auto spin_end = std::chrono::steady_clock::now() + spin;
    if (me_ == root) {
      if (r >= 2)
        wait_for_others(p2p, Flag::reduced, round - 2, plan.step(r, 0), spin_end);
      if (producer) producer->through(first + length);
      std::memcpy(plan.region(me_, round, 0), data + first, length);
      segment.publish_round(Flag::staged, round);
    } else {
      wait_for(p2p, root, Flag::staged, round, plan.step(r, 1), spin_end);
      copy_out(plan, data + first, plan.region(root, round, 0), length);
      segment.publish_round(Flag::reduced, round);
    }
  }
  end_pipelined_call(p2p, plan);
}

// Round r covers elements [r * part, (r + 1) * part) of every member's block: each member copies its
// own into region 0 of its slot ("staged") and into its own block of the output, copies the others'
// out of their slots, starting at the next member, and publishes "reduced" (read). A member stages
// round r + 1 once every member has read round r - 1 (the same region): right before its copy out of
// the last member's part of round r (copy_out_staging), when it has seen every member stage round r,
// which each did after publishing that it read round r - 1.
void HostCollectives::pipelined_allgather(UcxTransport &p2p, const CallSignature &signature, const void *send,
                                          void *recv, size_t send_count, xffl_dtype_t dtype, RoundOptions options) {
  using Flag = HostSegment::Flag;
  HostSegment &segment = *segment_;
  const size_t element = dtype_size(dtype);
  const Pipeline plan = start_pipelined_call(p2p, signature, options, element, send_count, 1);
  const auto *input = static_cast<const unsigned char *>(send);
  auto *output = static_cast<unsigned char *>(recv);
  auto block_of = [&](int member) { return output + static_cast<size_t>(member) * send_count * element; };
  const bool in_place = input == block_of(me_);
  const auto spin = std::chrono::nanoseconds(algorithm_choice::host_pipeline_spin_ns);
  auto offset_of = [&](size_t r) { return r * plan.part_elements * element; };
  auto length_of = [&](size_t r) { return std::min(plan.part_elements, send_count - r * plan.part_elements) * element; };
  // Round r's part of my block, into my slot of r's parity. Round 0's: every member finished the
  // calls before this one (the meeting of start_pipelined_call).
  auto stage = [&](size_t r) {
    return CopyRange{plan.region(me_, round_ + static_cast<uint32_t>(r), 0), input + offset_of(r), length_of(r)};
  };
  const CopyRange first = stage(0);
  std::memcpy(first.to, first.from, first.bytes);
  segment.publish_round(Flag::staged, round_);
  for (size_t r = 0; r < plan.rounds; ++r) {
    const uint32_t round = round_ + static_cast<uint32_t>(r);
    const size_t offset = offset_of(r), length = length_of(r);
    const bool last = r + 1 == plan.rounds;
    // My own block: streamed out of my slot (never overlapping the output) when the output is large;
    // otherwise from the input, which the measurements favoured below that size.
    if (!in_place) {
      if (plan.stream_output)
        copy_out(plan, block_of(me_) + offset, plan.region(me_, round, 0), length);
      else
        std::memmove(block_of(me_) + offset, input + offset, length);
    }

    const auto spin_end = std::chrono::steady_clock::now() + spin;
    for (int k = 1; k < members_; ++k) {
      const int owner = (me_ + k) % members_;
      wait_for(p2p, owner, Flag::staged, round, plan.step(r, 1), spin_end);
      const CopyRange part{block_of(owner) + offset, plan.region(owner, round, 0), length};
      copy_out_staging(plan, part, k + 1 < members_ || last ? CopyRange{nullptr, nullptr, 0} : stage(r + 1));
    }
    segment.publish_round(Flag::reduced, round);
    if (!last) segment.publish_round(Flag::staged, round + 1);
  }
  end_pipelined_call(p2p, plan);
}

unsigned char *HostCollectives::Pipeline::region(int member, uint32_t round, int index) const {
  return segment->slot(member, round) + static_cast<size_t>(index) * region_bytes;
}

void HostCollectives::copy_out(const Pipeline &plan, unsigned char *to, const unsigned char *from, size_t bytes) {
  copy_to_output(to, from, bytes, plan.stream_output);
  if (plan.stream_output) streamed_bytes_ += bytes;
}

void HostCollectives::copy_out_staging(const Pipeline &plan, CopyRange part, CopyRange operand) {
  // memcpy for the staging, not a loop of vector stores: its region was last read on the other
  // members' cores, and where a member's core does not share the last-level cache with the writer's,
  // vector stores first fetch every line back from there (read for ownership) while glibc's memcpy
  // (rep movsb at these sizes) writes whole lines without reading them: 1.3-1.5x busbw from 1 to 16
  // MiB on 2 ranks there, about even where the cores share it (bench/peers/README.md, "Staging with
  // memcpy").
  if (operand.bytes) std::memcpy(operand.to, operand.from, operand.bytes);
  copy_out(plan, static_cast<unsigned char *>(part.to), static_cast<const unsigned char *>(part.from), part.bytes);
}

algorithms::Step HostCollectives::Pipeline::step(size_t round, int phase) const {
  return algorithms::Step{1 + 2 * static_cast<int>(std::min<size_t>(round, INT32_MAX / 4)) + phase, total_steps};
}

HostCollectives::Pipeline HostCollectives::start_pipelined_call(UcxTransport &p2p, const CallSignature &signature,
                                                                RoundOptions options, size_t element, size_t count,
                                                                size_t parts_per_round) {
  const Pipeline plan = plan_pipeline(options, element, count, parts_per_round);
  enter(p2p, signature, nullptr, 0, algorithms::Step{0, plan.total_steps});
  return plan;
}

HostCollectives::Pipeline HostCollectives::continue_pipelined_calls(UcxTransport &p2p, const CallSignature &signature,
                                                                    RoundOptions options, size_t element, size_t count,
                                                                    size_t parts_per_round) {
  segment_->publish(p2p.sequence(), signature);
  ++continued_calls_;
  return plan_pipeline(options, element, count, parts_per_round);
}

HostCollectives::Pipeline HostCollectives::plan_pipeline(RoundOptions options, size_t element, size_t count,
                                                         size_t parts_per_round) const {
  Pipeline plan;
  plan.segment = segment_.get();
  // A member's part of a round: at most one region, and at most chunk_bytes (kept in the cache).
  plan.region_bytes = segment_->slot_bytes() / static_cast<size_t>(members_) / 64 * 64;
  plan.part_elements = std::max<size_t>(1, std::min(options.chunk_bytes, plan.region_bytes) / element);
  plan.stream_output = options.stream_output;
  const size_t round_elements = plan.part_elements * parts_per_round;
  plan.rounds = (count + round_elements - 1) / round_elements;
  plan.total_steps = 1 + 2 * static_cast<int>(std::min<size_t>(plan.rounds, INT32_MAX / 4));
  return plan;
}

void HostCollectives::end_pipelined_call(UcxTransport &p2p, const Pipeline &plan) {
  round_ += static_cast<uint32_t>(plan.rounds);
  ++pipelined_calls_;
  // Both parities' slots were used: the next call writes either only once every member is done.
  segment_->finish_reading(p2p.sequence());
  last_published_[0] = last_published_[1] = p2p.sequence();
}

void HostCollectives::broadcast(UcxTransport &p2p, const CallSignature &signature, void *buffer, size_t bytes,
                                int root) {
  const bool mine = me_ == root;
  enter(p2p, signature, mine ? buffer : nullptr, mine ? bytes : 0);
  if (!mine) std::memcpy(buffer, segment_->contribution(root, p2p.sequence(), bytes), bytes);
  segment_->finish_reading(p2p.sequence());
}

void HostCollectives::allgather(UcxTransport &p2p, const CallSignature &signature, const void *send, void *recv,
                                size_t send_count, xffl_dtype_t dtype) {
  const size_t block = send_count * dtype_size(dtype);
  enter(p2p, signature, send, block);
  auto *output = static_cast<unsigned char *>(recv);
  for (int member = 0; member < members_; ++member) {
    unsigned char *to = output + static_cast<size_t>(member) * block;
    if (member == me_) {
      if (to != send) std::memmove(to, send, block);
    } else {
      std::memcpy(to, segment_->contribution(member, p2p.sequence(), block), block);
    }
  }
  segment_->finish_reading(p2p.sequence());
}

void HostCollectives::reduce_scatter(UcxTransport &p2p, const CallSignature &signature, const void *send, void *recv,
                                     size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op) {
  const size_t bytes = recv_count * static_cast<size_t>(members_) * dtype_size(dtype);
  enter(p2p, signature, send, bytes);
  reduce_slots(p2p, bytes, static_cast<size_t>(me_) * recv_count, recv_count, dtype, op, recv);
  segment_->finish_reading(p2p.sequence());
}

void HostCollectives::barrier(UcxTransport &p2p, const CallSignature &signature) {
  enter(p2p, signature, nullptr, 0);
  segment_->finish_reading(p2p.sequence());
}

void HostCollectives::check_elsewhere(UcxTransport &p2p, const CallSignature &signature) const {
  if (!segment_) return;
  for (int member = 0; member < members_; ++member) {
    if (member == me_ || !segment_->arrived_at(member, p2p.sequence())) continue;
    const CallSignature theirs = segment_->signature(member, p2p.sequence());
    if (theirs != signature) p2p.disagree_with(member, theirs);
  }
}

}  // namespace xffl::comm::ucx
