#include "comm/ucx/host_segment.h"

#include <fcntl.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <new>

#include "comm/algorithm_choice.h"


namespace xffl::comm::ucx {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kMagic = 0x78666c7368736731ull;  // "xflshsg1"
constexpr size_t kPage = 4096;
// A sleep on a flag lasts at most this long: the caller looks for timeouts, dead peers and notices
// between sleeps (host_collectives.cpp).
constexpr long kSleepSliceNs = 10 * 1000 * 1000;

static_assert(std::atomic<uint32_t>::is_always_lock_free, "flags shared between processes must be lock-free");
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "a futex word is 32 bits");

size_t round_up(size_t bytes, size_t unit) { return (bytes + unit - 1) / unit * unit; }

// Whether a flag holding `value` (a sequence + 1) has reached the call `sequence`: modulo 2^32.
bool reached_value(uint32_t value, uint32_t sequence) { return static_cast<int32_t>(value - (sequence + 1)) >= 0; }

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void futex_wait(std::atomic<uint32_t> &word, uint32_t seen) {
  const timespec slice{0, kSleepSliceNs};
  // EAGAIN (the word changed), EINTR and ETIMEDOUT all mean: look again.
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT, seen, &slice, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t> &word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

std::string errno_text(const char *call) { return std::string(call) + ": " + std::strerror(errno); }

// A CallSignature in 16 bytes, as the flag line keeps it: kind, dtype and op are small enums (or -1;
// dtype and op are checked before any call reaches the segment).
struct PackedSignature {
  uint64_t count;
  int32_t root;
  int8_t kind, dtype, op, unused;
};

PackedSignature pack(const CallSignature &signature) {
  return {signature.count, signature.root, static_cast<int8_t>(signature.kind), static_cast<int8_t>(signature.dtype),
          static_cast<int8_t>(signature.op), 0};
}

CallSignature unpack(const PackedSignature &packed) {
  CallSignature signature;
  signature.kind = static_cast<CallKind>(packed.kind);
  signature.dtype = packed.dtype;
  signature.op = packed.op;
  signature.root = packed.root;
  signature.count = packed.count;
  return signature;
}

}  // namespace

// One member's flags: what it publishes on one cache line (with its signature and a small call's
// data, by parity of the sequence), what it reads back on another.
struct alignas(64) HostSegment::Flags {
  std::atomic<uint32_t> arrived{0};
  std::atomic<uint32_t> arrived_sleepers{0};
  PackedSignature signature[2];
  unsigned char inline_data[2][kInlineBytes];
  alignas(64) std::atomic<uint32_t> done{0};
  std::atomic<uint32_t> done_sleepers{0};
  alignas(64) std::atomic<uint32_t> staged{0};
  std::atomic<uint32_t> staged_sleepers{0};
  alignas(64) std::atomic<uint32_t> reduced{0};
  std::atomic<uint32_t> reduced_sleepers{0};
};

static_assert(2 * sizeof(std::atomic<uint32_t>) + 2 * sizeof(PackedSignature) + 2 * HostSegment::kInlineBytes <= 64,
              "what a member publishes for a call fits in one cache line");

// The first page: what an opening member checks before it trusts the rest.
struct HostSegment::Layout {
  uint64_t magic;
  int32_t members;
  int32_t unused;
  uint64_t slot_bytes;
  uint64_t total_bytes;
};

size_t HostSegment::flags_bytes(int members) { return round_up(sizeof(Flags) * static_cast<size_t>(members), kPage); }

size_t HostSegment::total_bytes(int members, size_t slot_bytes) {
  return kPage + flags_bytes(members) + 2 * static_cast<size_t>(members) * slot_bytes;
}

HostSegment::HostSegment(int members, int me, size_t slot_bytes, unsigned char *base, size_t bytes, int descriptor)
    : members_(members), me_(me), slot_bytes_(slot_bytes), base_(base), bytes_(bytes), descriptor_(descriptor) {}

std::unique_ptr<HostSegment> HostSegment::create(int members, int me, size_t slot_bytes, uint32_t first_sequence,
                                                 std::string *why) {
  slot_bytes = round_up(slot_bytes, kPage);
  const size_t bytes = total_bytes(members, slot_bytes);
  const int descriptor = memfd_create("xffl-host-collectives", MFD_CLOEXEC);
  if (descriptor < 0) {
    *why = errno_text("memfd_create");
    return nullptr;
  }
  if (ftruncate(descriptor, static_cast<off_t>(bytes)) != 0) {
    *why = errno_text("ftruncate");
    close(descriptor);
    return nullptr;
  }
  void *base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0);
  if (base == MAP_FAILED) {
    *why = errno_text("mmap");
    close(descriptor);
    return nullptr;
  }
  std::unique_ptr<HostSegment> segment(
      new HostSegment(members, me, slot_bytes, static_cast<unsigned char *>(base), bytes, descriptor));
  // Every member counts as having arrived at and read the call before this one: the flags' sequence
  // numbers continue the communicator's.
  for (int member = 0; member < members; ++member) {
    Flags *flags = new (segment->base_ + kPage + sizeof(Flags) * static_cast<size_t>(member)) Flags;
    flags->arrived.store(first_sequence, std::memory_order_relaxed);
    flags->done.store(first_sequence, std::memory_order_relaxed);
  }
  new (segment->base_) Layout{kMagic, members, 0, slot_bytes, bytes};
  std::atomic_thread_fence(std::memory_order_release);
  return segment;
}

std::unique_ptr<HostSegment> HostSegment::open(long pid, int descriptor, int members, int me, size_t slot_bytes,
                                               std::string *why) {
  slot_bytes = round_up(slot_bytes, kPage);
  const size_t bytes = total_bytes(members, slot_bytes);
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(descriptor);
  const int mine = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (mine < 0) {
    *why = errno_text(("open " + path).c_str());
    return nullptr;
  }
  struct stat status {};
  if (fstat(mine, &status) != 0 || static_cast<size_t>(status.st_size) != bytes) {
    *why = path + " is not the segment expected (" + std::to_string(status.st_size) + " bytes, " +
           std::to_string(bytes) + " expected)";
    close(mine);
    return nullptr;
  }
  void *base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);
  close(mine);  // the mapping keeps the memory
  if (base == MAP_FAILED) {
    *why = errno_text("mmap");
    return nullptr;
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  const auto *layout = static_cast<const Layout *>(base);
  if (layout->magic != kMagic || layout->members != members || layout->slot_bytes != slot_bytes ||
      layout->total_bytes != bytes) {
    *why = path + " does not hold the segment expected";
    munmap(base, bytes);
    return nullptr;
  }
  return std::unique_ptr<HostSegment>(
      new HostSegment(members, me, slot_bytes, static_cast<unsigned char *>(base), bytes, -1));
}

HostSegment::~HostSegment() {
  close_descriptor();
  munmap(base_, bytes_);
}

void HostSegment::close_descriptor() {
  if (descriptor_ >= 0) close(descriptor_);
  descriptor_ = -1;
}

HostSegment::Flags &HostSegment::flags(int member) const {
  return *std::launder(reinterpret_cast<Flags *>(base_ + kPage + sizeof(Flags) * static_cast<size_t>(member)));
}

unsigned char *HostSegment::slot(int member, uint32_t sequence) const {
  const size_t index = static_cast<size_t>(sequence & 1u) * static_cast<size_t>(members_) + static_cast<size_t>(member);
  return base_ + kPage + flags_bytes(members_) + index * slot_bytes_;
}

unsigned char *HostSegment::contribution(int member, uint32_t sequence, size_t bytes) const {
  return bytes <= kInlineBytes ? flags(member).inline_data[sequence & 1u] : slot(member, sequence);
}

void HostSegment::publish(uint32_t sequence, const CallSignature &signature) {
  Flags &mine = flags(me_);
  mine.signature[sequence & 1u] = pack(signature);
  publish_round(Flag::arrived, sequence);
}

void HostSegment::finish_reading(uint32_t sequence) { publish_round(Flag::done, sequence); }

HostSegment::Word HostSegment::word(int member, Flag flag) const {
  Flags &of = flags(member);
  switch (flag) {
    case Flag::arrived: return {of.arrived, of.arrived_sleepers};
    case Flag::done: return {of.done, of.done_sleepers};
    case Flag::staged: return {of.staged, of.staged_sleepers};
    case Flag::reduced: break;
  }
  return {of.reduced, of.reduced_sleepers};
}

void HostSegment::publish_round(Flag flag, uint32_t round) {
  const Word mine = word(me_, flag);
  mine.value.store(round + 1, std::memory_order_seq_cst);
  if (mine.sleepers.load(std::memory_order_seq_cst) != 0) {
    futex_wake(mine.value);
    last_wake_ = Clock::now();
  }
}

bool HostSegment::reached(int member, Flag flag, uint32_t value) const {
  return reached_value(word(member, flag).value.load(std::memory_order_acquire), value);
}

bool HostSegment::arrived(int member, uint32_t sequence) const { return reached(member, Flag::arrived, sequence); }

bool HostSegment::arrived_at(int member, uint32_t sequence) const {
  return flags(member).arrived.load(std::memory_order_acquire) == sequence + 1;
}


CallSignature HostSegment::signature(int member, uint32_t sequence) const {
  return unpack(flags(member).signature[sequence & 1u]);
}

bool HostSegment::spin(int member, Flag flag, uint32_t value, Clock::time_point spin_end) const {
  const std::atomic<uint32_t> &awaited = word(member, flag).value;
  for (unsigned round = 1;; ++round) {
    if (reached_value(awaited.load(std::memory_order_acquire), value)) return true;
    relax();
    if (round % 64 == 0 && Clock::now() >= spin_end) return false;
  }
}

bool HostSegment::yield(int member, Flag flag, uint32_t value) const {
  using std::chrono::nanoseconds;
  const Clock::time_point start = Clock::now();
  // Only shortly after this member woke a sleeper: that member is on its way (a wake-up takes up to
  // ~100 us here), and whoever it waits for next had better not be asleep when it arrives.
  const bool woke_lately = start - last_wake_ < nanoseconds(algorithm_choice::host_segment_woken_window_ns);
  const Clock::time_point idle_end =
      woke_lately ? start + nanoseconds(algorithm_choice::host_segment_idle_spin_ns) : start;
  for (int counted = 0; counted < algorithm_choice::host_segment_yields;) {
    const Clock::time_point before = Clock::now();
    sched_yield();
    if (reached(member, flag, value)) return true;
    const Clock::time_point after = Clock::now();
    // Another task ran on this core (or the idle budget is spent): a yield as before.
    if (after - before >= nanoseconds(algorithm_choice::host_segment_idle_yield_ns) || after >= idle_end) {
      ++counted;
      continue;
    }
    // Nobody else wants this core: sleeping would idle it. Watch the flag until the next yield.
    if (spin(member, flag, value, after + nanoseconds(algorithm_choice::host_segment_idle_yield_every_ns)))
      return true;
  }
  return false;
}

bool HostSegment::sleep(int member, Flag flag, uint32_t value) const {
  const Word watched = word(member, flag);
  std::atomic<uint32_t> &awaited = watched.value;
  std::atomic<uint32_t> &counted = watched.sleepers;
  counted.fetch_add(1, std::memory_order_seq_cst);
  const uint32_t seen = awaited.load(std::memory_order_seq_cst);
  if (!reached_value(seen, value)) futex_wait(awaited, seen);
  counted.fetch_sub(1, std::memory_order_seq_cst);
  return reached_value(awaited.load(std::memory_order_acquire), value);
}

}  // namespace xffl::comm::ucx
