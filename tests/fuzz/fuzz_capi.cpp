// libFuzzer target: drives the whole C API with call sequences and arguments decoded from the input,
// and checks what the headers promise after every call:
//   - every status is one of the xffl_status_t values; a failure leaves a non-empty message;
//   - outputs are written only on success (*out, value), lengths on XFFL_OK and XFFL_EBUFSIZE;
//   - a group contains the caller exactly once, at its group rank, with distinct ranks in [0, W);
//   - a mesh holds prod(shape) ranks and contains the caller; describe's length matches its text;
//   - collectives on a one-member group are local copies / reductions of one operand;
//   - is_* answer 0 or 1 and agree with the layout calls that succeeded.
// Backend NONE only: UCX and NCCL would open sockets and wait for peers. Sizes stay bounded so each
// input runs in microseconds; arbitrary 32-bit values still reach every validation path.
#include <xffl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void violated(const char *what, int line, const std::string &detail) {
  std::fprintf(stderr, "fuzz_capi: invariant violated at line %d: %s (%s); last message: \"%s\"\n", line, what,
               detail.c_str(), xffl_last_error_message());
  std::abort();
}

#define FUZZ_CHECK(cond, detail)                     \
  do {                                               \
    if (!(cond)) violated(#cond, __LINE__, (detail)); \
  } while (0)

// Reads the input front to back; an exhausted input reads as zeros so every prefix is a valid program.
class Input {
 public:
  Input(const uint8_t *data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | byte();
    return v;
  }
  // Mostly small non-negative values, sometimes negative, sometimes any 32-bit value.
  int small(int max) {
    const uint8_t mode = byte();
    if (mode < 200) return static_cast<int>(byte() % (max + 1));
    if (mode < 230) return -static_cast<int>(byte() % 4);
    return static_cast<int>(u32());
  }
  // A buffer capacity: 0, tiny, exact-ish or generous, never more than limit.
  size_t capacity(size_t limit) {
    const uint8_t mode = byte();
    if (mode < 40) return 0;
    if (mode < 120) return byte() % 8;
    return byte() % (limit + 1);
  }

 private:
  const uint8_t *data_;
  size_t size_;
  size_t pos_ = 0;
};

std::string status_detail(xffl_status_t status) { return xffl_status_string(status); }

// XFFL_FUZZ_TRACE=1 prints every call and its status: how to read what an input does (or a crash).
bool tracing() {
  static const bool on = std::getenv("XFFL_FUZZ_TRACE") != nullptr;
  return on;
}

// Every status is an enum value; a failure leaves a message.
xffl_status_t checked(xffl_status_t status, const char *call) {
  if (tracing()) std::fprintf(stderr, "%-60.60s -> %s\n", call, xffl_status_string(status));
  FUZZ_CHECK(status <= XFFL_OK && status >= XFFL_EQUORUM, "status " + std::to_string(status));
  FUZZ_CHECK(status != XFFL_EINTERNAL, status_detail(status));  // EINTERNAL is a bug by definition
  if (status != XFFL_OK) FUZZ_CHECK(xffl_last_error_message()[0] != '\0', status_detail(status));
  return status;
}

#define CHECKED(call) checked((call), #call)

constexpr size_t kMaxBuffer = 256;
constexpr int kMaxWorld = 64;

// What the sequence of successful calls has established, to check later answers against.
struct Model {
  xffl_state_t *st = nullptr;
  bool global = false;
  int rank = -1;
  int world = 0;
  enum class Layout { None, Fsdp, Hsdp, Federated } layout = Layout::None;  // the last layout call that held
  std::vector<xffl_group_t *> owned;
  // Borrowed groups die with their layout: only used until the next call that may change it.
  std::vector<xffl_group_t *> borrowed;
};

int bounded_world(Input &in) {
  const uint8_t mode = in.byte();
  if (mode < 220) return 1 + in.byte() % kMaxWorld;
  if (mode < 240) return 1 + static_cast<int>(in.u32() % 4096);
  return static_cast<int>(in.u32());  // validation paths: <= 0 and huge
}

// A world larger than this is valid but its whole-world lists are too big to copy out while fuzzing.
bool small_world(const Model &m) { return m.world <= 4096; }

void check_group(const Model &m, const xffl_group_t *group, Input &in) {
  int size = -1, grank = -1;
  CHECKED(xffl_group_size(group, &size));
  CHECKED(xffl_group_rank(group, &grank));
  FUZZ_CHECK(size >= 1 && grank >= 0 && grank < size, std::to_string(grank) + " of " + std::to_string(size));
  const char *description = xffl_group_description(group);
  FUZZ_CHECK(description != nullptr, "description");
  if (size > static_cast<int>(kMaxBuffer)) return;
  std::vector<int> ranks(kMaxBuffer, -7);
  size_t len = 12345;
  const size_t cap = in.capacity(kMaxBuffer);
  const xffl_status_t rc = CHECKED(xffl_group_ranks(group, ranks.data(), cap, &len));
  FUZZ_CHECK(rc == XFFL_OK || rc == XFFL_EBUFSIZE, status_detail(rc));
  FUZZ_CHECK(len == static_cast<size_t>(size), std::to_string(len));
  if (rc == XFFL_EBUFSIZE) {
    FUZZ_CHECK(cap < len, "EBUFSIZE with enough room");
    return;
  }
  FUZZ_CHECK(ranks[static_cast<size_t>(grank)] == m.rank, "caller not at its group rank");
  // Sorted rather than marked in a world-sized bitmap: the world may hold 2^31 ranks, the group at most
  // kMaxBuffer (a bitmap of the world took over 10 s per input under ASan, CI 2026-12-02).
  std::vector<int> members(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(len));
  std::sort(members.begin(), members.end());
  for (size_t i = 0; i < len; ++i) {
    FUZZ_CHECK(members[i] >= 0 && members[i] < m.world, "member " + std::to_string(members[i]));
    FUZZ_CHECK(i == 0 || members[i] != members[i - 1], "duplicate member " + std::to_string(members[i]));
  }
}

void forget_borrowed(Model &m) { m.borrowed.clear(); }

// The whole state goes at once: borrowed groups with it. Owned groups must be destroyed first.
void destroy_state(Model &m) {
  for (xffl_group_t *g : m.owned) xffl_group_destroy(g);
  m.owned.clear();
  forget_borrowed(m);
  xffl_state_destroy(m.st);
  m = Model{};
}

void op_create(Model &m) {
  if (m.st) destroy_state(m);
  xffl_state_t *st = nullptr;
  CHECKED(xffl_state_create(&st));
  FUZZ_CHECK(st != nullptr, "create gave NULL");
  m.st = st;
}

void op_set_global(Model &m, Input &in) {
  const uint8_t b = in.byte();
  const xffl_backend_t backend = static_cast<xffl_backend_t>(b < 230 ? XFFL_BACKEND_NONE : 3 + b % 7);
  const uint8_t d = in.byte();
  const xffl_device_t device = static_cast<xffl_device_t>(d < 200 ? XFFL_DEVICE_CPU : d % 5);
  const uint8_t a = in.byte();
  const char *addr = a < 220 ? "127.0.0.1" : (a < 240 ? "" : nullptr);
  const int port = in.byte() < 240 ? 29500 : static_cast<int>(in.u32());
  const int world = bounded_world(in);
  const int rank = in.byte() < 230 && world > 0 ? static_cast<int>(in.u32() % static_cast<uint32_t>(world))
                                                : static_cast<int>(in.u32());
  const xffl_status_t rc = CHECKED(xffl_set_global(m.st, backend, device, addr, port, rank, world));
  if (rc == XFFL_OK) {
    FUZZ_CHECK(!m.global, "set_global succeeded twice");
    FUZZ_CHECK(backend == XFFL_BACKEND_NONE && addr && addr[0] && rank >= 0 && rank < world, "bad args accepted");
    m.global = true;
    m.rank = rank;
    m.world = world;
  }
}

void op_set_node(Model &m, Input &in) {
  int local_size = in.small(16);
  if (m.global && in.byte() < 200) {  // mostly a consistent node layout, to get past validation
    local_size = 1 + in.byte() % 8;
    if (m.world % local_size != 0) local_size = 1;
    CHECKED(xffl_set_node(m.st, m.rank % local_size, local_size, m.rank / local_size, m.world / local_size));
    return;
  }
  CHECKED(xffl_set_node(m.st, in.small(16), local_size, in.small(16), in.small(16)));
}

void op_layout(Model &m, Input &in) {
  forget_borrowed(m);
  const uint8_t which = in.byte() % 5;
  xffl_status_t rc;
  if (which == 0) {
    rc = CHECKED(xffl_set_fsdp(m.st));
  } else if (which == 3) {  // a caller's mesh: mostly around the caller, sometimes without it or repeated
    std::vector<int> ranks(in.byte() % 9);
    for (int &r : ranks) r = in.byte() < 200 ? m.rank + in.byte() % 4 : in.small(m.world > 0 ? m.world : 16);
    if (!ranks.empty() && in.byte() < 200) ranks[0] = m.rank;
    const int *ptr = ranks.empty() && in.byte() < 128 ? nullptr : ranks.data();
    rc = CHECKED(xffl_set_fsdp_mesh(m.st, ptr, ranks.size()));
    if (rc == XFFL_OK) {
      std::vector<int> sorted = ranks;
      std::sort(sorted.begin(), sorted.end());
      FUZZ_CHECK(!sorted.empty() && std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end() &&
                     std::binary_search(sorted.begin(), sorted.end(), m.rank) && sorted.front() >= 0 &&
                     sorted.back() < m.world,
                 "a bad fsdp mesh was accepted");
    }
  } else if (which == 4) {  // HSDP from its fields: mostly the caller's own place, sometimes one off
    const int s = in.byte() < 200 ? 1 + in.byte() % 8 : in.small(16);
    const int shift = in.byte() < 180 ? 0 : in.small(3);
    const int rl = s > 0 ? m.rank % s + (shift & 1) : in.small(4);
    const int rr = s > 0 ? m.rank / s + (shift & 2) / 2 : in.small(4);
    const int replicas[2] = {s > 0 ? m.world / s : in.small(8), in.small(8)};
    const size_t n = in.byte() < 220 ? 1 : in.byte() % 3;
    rc = CHECKED(xffl_set_hsdp_manual(m.st, rl, s, rr, replicas, n));
    if (rc == XFFL_OK)
      FUZZ_CHECK(n == 1 && s >= 1 && m.world % s == 0 && rl == m.rank % s && rr == m.rank / s,
                 "inconsistent hsdp fields accepted");
  } else if (which == 1) {
    const int hsdp = in.small(16);
    rc = CHECKED(xffl_set_hsdp(m.st, hsdp));
    if (rc == XFFL_OK) FUZZ_CHECK(hsdp >= 1 && m.world % hsdp == 0, "hsdp " + std::to_string(hsdp));
  } else {
    const size_t n = in.byte() % 9;  // 0 is invalid; 1 expands to equal groups
    std::vector<int> sizes(n ? n : 1);
    long long remaining = m.world;
    for (size_t i = 0; i < n; ++i) {
      if (in.byte() < 200 && i + 1 == n && remaining >= INT32_MIN && remaining <= INT32_MAX) {
        sizes[i] = static_cast<int>(remaining);  // make the sum right most of the time
      } else {
        sizes[i] = in.small(m.world > 0 ? m.world : 16);
        remaining -= sizes[i];
      }
    }
    const int hsdp = in.byte() < 80 ? 0 : in.small(8);
    const int *ptr = in.byte() < 250 ? sizes.data() : nullptr;
    // One size expands to W / F groups, and a plan costs O(G): valid, but seconds for a 2^31 world.
    if (!small_world(m) && n == 1) return;
    rc = CHECKED(xffl_federated_scaling(m.st, ptr, n, hsdp));
    if (rc == XFFL_OK) FUZZ_CHECK(ptr && n >= 1 && hsdp >= 0, "bad federated arguments accepted");
  }
  if (rc == XFFL_OK) {
    FUZZ_CHECK(m.global && m.layout == Model::Layout::None, "layout accepted out of order");
    m.layout = which == 0 || which == 3   ? Model::Layout::Fsdp
               : which == 1 || which == 4 ? Model::Layout::Hsdp
                                          : Model::Layout::Federated;
  }
}

void op_unset(Model &m, Input &in) {
  forget_borrowed(m);
  const uint8_t which = in.byte() % 3;
  const xffl_status_t rc = CHECKED(which == 0   ? xffl_unset_fsdp(m.st)
                                   : which == 1 ? xffl_unset_hsdp(m.st)
                                                : xffl_unset_federated_scaling(m.st));
  const Model::Layout matching = which == 0 ? Model::Layout::Fsdp : which == 1 ? Model::Layout::Hsdp : Model::Layout::Federated;
  if (m.layout != matching) FUZZ_CHECK(rc != XFFL_OK, "unset of a layout that is not set succeeded");
  if (rc == XFFL_OK) {
    m.layout = Model::Layout::None;
    FUZZ_CHECK(!xffl_is_fsdp_setup(m.st) && !xffl_is_hsdp_setup(m.st) && !xffl_is_federated_scaling_setup(m.st),
               "a layout flag survived unset");
  }
}

void op_is(Model &m) {
  const int flags[] = {xffl_is_node_setup(m.st), xffl_is_fsdp_setup(m.st), xffl_is_hsdp_setup(m.st),
                       xffl_is_federated_scaling_setup(m.st)};
  for (int f : flags) FUZZ_CHECK(f == 0 || f == 1, std::to_string(f));
  switch (m.layout) {
    case Model::Layout::None: FUZZ_CHECK(!flags[1] && !flags[2] && !flags[3], "layout flags without a layout"); break;
    case Model::Layout::Fsdp: FUZZ_CHECK(flags[1] && !flags[2] && !flags[3], "set_fsdp flags"); break;
    case Model::Layout::Hsdp: FUZZ_CHECK(flags[2] && !flags[1] && !flags[3], "set_hsdp flags"); break;
    case Model::Layout::Federated: FUZZ_CHECK(flags[3] && (flags[1] != flags[2]), "federated flags"); break;
  }
}

void op_get_int(Model &m, Input &in) {
  const xffl_attr_t attr = static_cast<xffl_attr_t>(in.byte() < 240 ? in.byte() % 26 : static_cast<int>(in.u32()));
  int value = -424242;
  const xffl_status_t rc = CHECKED(xffl_get_int(m.st, attr, &value));
  if (rc != XFFL_OK) {
    FUZZ_CHECK(value == -424242, "value written on failure");
    return;
  }
  if (attr == XFFL_ATTR_RANK) FUZZ_CHECK(value == m.rank, std::to_string(value));
  if (attr == XFFL_ATTR_WORLD_SIZE) FUZZ_CHECK(value == m.world, std::to_string(value));
  if (attr == XFFL_ATTR_IS_SENDER) FUZZ_CHECK(value == 0 || value == 1, std::to_string(value));
  if (attr == XFFL_ATTR_RECEIVE_FROM) FUZZ_CHECK(value >= 0 && value < m.world && value != m.rank, std::to_string(value));
  if (attr == XFFL_ATTR_FEDERATED_RANK || attr == XFFL_ATTR_REPLICA_RANK || attr == XFFL_ATTR_REPLICA_LOCAL_RANK ||
      attr == XFFL_ATTR_FEDERATED_LOCAL_RANK)
    FUZZ_CHECK(value >= 0 && value < m.world, std::to_string(value));
}

void op_get_ints(Model &m, Input &in) {
  const xffl_attr_t attr = static_cast<xffl_attr_t>(in.byte() % 27);
  std::vector<int> buf(kMaxBuffer, -5);
  const size_t cap = in.capacity(kMaxBuffer);
  size_t len = 999999;
  const xffl_status_t rc = CHECKED(xffl_get_ints(m.st, attr, in.byte() < 250 ? buf.data() : nullptr, cap, &len));
  if (rc == XFFL_OK) FUZZ_CHECK(len <= cap, std::to_string(len) + " > " + std::to_string(cap));
  if (rc == XFFL_EBUFSIZE) FUZZ_CHECK(len > cap && len != 999999, std::to_string(len));
  if (rc == XFFL_OK && attr == XFFL_ATTR_FEDERATED_LOCAL_SIZE) {
    long sum = 0;
    for (size_t i = 0; i < len; ++i) sum += buf[i];
    FUZZ_CHECK(sum == m.world, "federated sizes sum to " + std::to_string(sum));
  }
}

void op_get_group(Model &m, Input &in) {
  const xffl_group_kind_t kind = static_cast<xffl_group_kind_t>(in.byte() < 240 ? in.byte() % 7 : in.small(100));
  const int instance = in.byte() < 200 ? 0 : in.small(4);
  xffl_group_t *sentinel = reinterpret_cast<xffl_group_t *>(&m);
  xffl_group_t *group = sentinel;
  const xffl_status_t rc = CHECKED(xffl_get_group(m.st, kind, instance, &group));
  if (rc != XFFL_OK) {
    FUZZ_CHECK(group == sentinel, "out written on failure");
    return;
  }
  FUZZ_CHECK(group != nullptr, "NULL group on success");
  m.borrowed.push_back(group);
  if (small_world(m)) check_group(m, group, in);
  xffl_group_destroy(group);  // borrowed: must be ignored
}

void op_create_process_group(Model &m, Input &in) {
  const size_t n = in.byte() % 6;
  std::vector<int> ranks(n ? n : 1, 0);
  for (size_t i = 0; i < n; ++i) ranks[i] = in.byte() < 200 && m.world > 0 ? static_cast<int>(in.u32() % static_cast<uint32_t>(m.world)) : in.small(70);
  if (n > 0 && in.byte() < 180) ranks[in.byte() % n] = m.rank;  // usually include the caller
  xffl_group_t *sentinel = reinterpret_cast<xffl_group_t *>(&m);
  xffl_group_t *group = sentinel;
  const char *description = in.byte() < 128 ? "fuzz group" : nullptr;
  const xffl_status_t rc = CHECKED(xffl_create_process_group(m.st, ranks.data(), n, description, &group));
  if (rc != XFFL_OK) {
    FUZZ_CHECK(group == sentinel, "out written on failure");
    return;
  }
  FUZZ_CHECK(group != nullptr && n >= 1, "success with n = 0");
  check_group(m, group, in);
  int size = 0;
  CHECKED(xffl_group_size(group, &size));
  FUZZ_CHECK(static_cast<size_t>(size) == n, "size " + std::to_string(size) + " of " + std::to_string(n));
  if (m.owned.size() < 4) {
    m.owned.push_back(group);
  } else {
    xffl_group_destroy(group);
  }
}

size_t dtype_size(xffl_dtype_t dtype) {
  switch (dtype) {
    case XFFL_F64: case XFFL_I64: return 8;
    case XFFL_F32: case XFFL_I32: return 4;
    case XFFL_F16: case XFFL_BF16: return 2;
    default: return 1;
  }
}

// Collectives on a group this rank holds: on one member they are local and exact.
void op_collective(Model &m, Input &in) {
  std::vector<xffl_group_t *> groups = m.owned;
  groups.insert(groups.end(), m.borrowed.begin(), m.borrowed.end());
  xffl_group_t *group = groups.empty() || in.byte() > 240 ? nullptr : groups[in.byte() % groups.size()];
  int size = 0;
  if (group) CHECKED(xffl_group_size(group, &size));
  const uint8_t d = in.byte();
  const xffl_dtype_t dtype = static_cast<xffl_dtype_t>(d < 240 ? d % 8 : d);
  const uint8_t o = in.byte();
  const xffl_redop_t op = static_cast<xffl_redop_t>(o < 240 ? o % 5 : o);
  // Counts the buffers really hold, or counts whose byte size overflows size_t (dtype size >= 2),
  // which must be refused before any memory is touched. Buffers hold count elements per member.
  const bool absurd = in.byte() >= 250 && d < 240 && dtype_size(dtype) >= 2;
  const size_t count = absurd ? SIZE_MAX / 2 + 1 + in.byte() : in.byte() % 16;
  if (size > 4096) return;
  const size_t members = static_cast<size_t>(size > 0 ? size : 1);
  std::vector<unsigned char> send(16 * 8 * members), recv(16 * 8 * members, 0xEE);
  for (size_t i = 0; i < send.size(); ++i) send[i] = i < 256 ? in.byte() & 0x3F : 1;  // small: exact products
  void *stream = in.byte() < 250 ? nullptr : &m;
  const bool sane = group && size == 1 && !absurd && stream == nullptr && d < 240;
  xffl_status_t rc;
  switch (in.byte() % 5) {
    case 0:
      rc = CHECKED(xffl_allreduce(group, send.data(), recv.data(), count, dtype, op, stream));
      break;
    case 1:
      std::memcpy(recv.data(), send.data(), send.size());
      rc = CHECKED(xffl_broadcast(group, recv.data(), count, dtype, in.byte() < 200 ? m.rank : in.small(70), stream));
      break;
    case 2:
      rc = CHECKED(xffl_allgather(group, send.data(), recv.data(), count, dtype, stream));
      break;
    case 3:
      rc = CHECKED(xffl_reduce_scatter(group, send.data(), recv.data(), count, dtype, op, stream));
      break;
    default:
      rc = CHECKED(xffl_barrier(group));
      FUZZ_CHECK(group || rc == XFFL_EINVAL, "barrier on NULL");
      return;
  }
  if (!group) FUZZ_CHECK(rc == XFFL_EINVAL, "collective on a NULL group: " + status_detail(rc));
  if (absurd) FUZZ_CHECK(rc != XFFL_OK, "a count overflowing the address space was accepted");
  // One member, one operand: SUM, AVG, MIN, MAX and PROD of a single value, allgather and
  // reduce_scatter of one block, and broadcast are all the identity (AVG of integers divides by 1).
  if (sane && rc == XFFL_OK && o < 240)
    FUZZ_CHECK(std::memcmp(send.data(), recv.data(), count * dtype_size(dtype)) == 0, "one-member collective changed data");
}

void op_get_mesh(Model &m, Input &in) {
  const xffl_mesh_kind_t kind = static_cast<xffl_mesh_kind_t>(in.byte() < 240 ? in.byte() % 2 : in.small(9));
  int shape[2] = {-1, -1};
  size_t ndim = 77, len = 77;
  std::vector<int> ranks(kMaxBuffer, -3);
  const size_t cap = small_world(m) ? in.capacity(kMaxBuffer) : in.byte() % 4;
  const xffl_status_t rc = CHECKED(xffl_get_mesh(m.st, kind, shape, 2, &ndim, cap ? ranks.data() : nullptr, cap, &len));
  if (rc != XFFL_OK) {
    if (rc == XFFL_EBUFSIZE) FUZZ_CHECK(len > cap, std::to_string(len));
    return;
  }
  FUZZ_CHECK(ndim == 1 || ndim == 2, std::to_string(ndim));
  size_t product = 1;
  for (size_t i = 0; i < ndim; ++i) {
    FUZZ_CHECK(shape[i] >= 1, "extent " + std::to_string(shape[i]));
    product *= static_cast<size_t>(shape[i]);
  }
  FUZZ_CHECK(product == len, std::to_string(product) + " != " + std::to_string(len));
  bool found = false;
  for (size_t i = 0; i < len; ++i) found = found || ranks[i] == m.rank;
  FUZZ_CHECK(found, "mesh without the caller");
}

void op_describe(Model &m, Input &in) {
  if (!small_world(m) && m.layout != Model::Layout::None) return;  // the text lists whole meshes
  const xffl_format_t format = static_cast<xffl_format_t>(in.byte() < 240 ? in.byte() % 2 : in.small(9));
  std::vector<char> buf(1 << 16, 'Z');
  size_t cap = in.byte() < 128 ? in.capacity(64) : buf.size();
  size_t len = 0;
  xffl_status_t rc = CHECKED(xffl_state_describe(m.st, format, cap ? buf.data() : nullptr, cap, &len));
  if (rc == XFFL_EBUFSIZE) {
    FUZZ_CHECK(len >= cap, std::to_string(len) + " < " + std::to_string(cap));
    if (len + 1 > buf.size()) return;
    const size_t needed = len;
    cap = len + 1;
    rc = CHECKED(xffl_state_describe(m.st, format, buf.data(), cap, &len));
    FUZZ_CHECK(rc == XFFL_OK && len == needed, "the announced length was not enough: " + status_detail(rc));
  }
  if (rc == XFFL_OK) FUZZ_CHECK(std::strlen(buf.data()) == len, "length differs from the text");
}

void op_misc(Model &m, Input &in) {
  switch (in.byte() % 8) {
    case 0: {
      const int index = in.byte() < 200 ? -1 : in.small(4);
      // Any int: each layout makes K instances of two group families up front, so the library must
      // refuse an absurd K (it bounds K) rather than try to allocate it.
      const int streams = in.small(4);
      const xffl_status_t rc = CHECKED(xffl_set_exec_device(m.st, index, streams));
      if (rc == XFFL_OK) FUZZ_CHECK(streams >= 1, "streams " + std::to_string(streams));
      break;
    }
    case 1:
      CHECKED(xffl_set_init_device(m.st, static_cast<xffl_device_t>(in.small(3)), in.small(1)));
      break;
    case 2: {
      const xffl_option_t option = static_cast<xffl_option_t>(in.small(3));
      const int value = in.small(1000);
      int read = -1;
      if (CHECKED(xffl_set_option(m.st, option, value)) == XFFL_OK && option != XFFL_OPT_TIMEOUT_MS) {
        CHECKED(xffl_get_option(m.st, option, &read));
        FUZZ_CHECK(read == value, std::to_string(read) + " != " + std::to_string(value));
      }
      break;
    }
    case 3: {
      char buf[64];
      size_t len = 0;
      const size_t cap = in.capacity(sizeof buf);
      const xffl_status_t rc = CHECKED(xffl_get_master_addr(m.st, cap ? buf : nullptr, cap, &len));
      if (rc == XFFL_OK) FUZZ_CHECK(std::strlen(buf) == len, "master_addr length");
      break;
    }
    case 4: {
      const size_t ndim = in.byte() % 4;
      int shape[3] = {in.small(6), in.small(6), in.small(6)};
      std::vector<int> ranks(kMaxBuffer, -1);
      size_t len = 0;
      const size_t cap = in.capacity(kMaxBuffer);
      if (CHECKED(xffl_create_device_mesh(shape, ndim, ranks.data(), cap, &len)) == XFFL_OK)
        for (size_t i = 0; i < len; ++i) FUZZ_CHECK(ranks[i] == static_cast<int>(i), "device mesh not row-major");
      break;
    }
    case 5: {
      std::vector<float> model(8, 1.5f);
      CHECKED(xffl_federated_average(m.st, model.data(), in.byte() % 8, static_cast<xffl_dtype_t>(in.byte() % 9), nullptr));
      break;
    }
    case 6: {
      const double weights[4] = {1.0, 2.0, in.byte() < 128 ? 0.0 : -1.0, 3.5};
      CHECKED(xffl_set_federated_weights(m.st, in.byte() < 250 ? weights : nullptr, in.byte() % 5));
      break;
    }
    default: {
      const char *s = xffl_status_string(static_cast<xffl_status_t>(in.small(20)));
      FUZZ_CHECK(s && s[0], "empty status string");
      break;
    }
  }
}

// NULL handles are refused with XFFL_EINVAL (or ignored, for destroy) by every function.
void op_nulls(Input &in) {
  int value = 0;
  size_t len = 0;
  xffl_group_t *group = nullptr;
  switch (in.byte() % 6) {
    case 0: FUZZ_CHECK(CHECKED(xffl_state_create(nullptr)) == XFFL_EINVAL, "create(NULL)"); break;
    case 1: FUZZ_CHECK(CHECKED(xffl_get_int(nullptr, XFFL_ATTR_RANK, &value)) == XFFL_EINVAL, "get_int(NULL)"); break;
    case 2: FUZZ_CHECK(CHECKED(xffl_get_group(nullptr, XFFL_GROUP_WORLD, 0, &group)) == XFFL_EINVAL, "get_group(NULL)"); break;
    case 3: FUZZ_CHECK(CHECKED(xffl_state_describe(nullptr, XFFL_FORMAT_TEXT, nullptr, 0, &len)) == XFFL_EINVAL, "describe(NULL)"); break;
    case 4: FUZZ_CHECK(CHECKED(xffl_group_size(nullptr, &value)) == XFFL_EINVAL, "group_size(NULL)"); break;
    default:
      xffl_state_destroy(nullptr);
      xffl_group_destroy(nullptr);
      FUZZ_CHECK(xffl_group_description(nullptr)[0] == '\0', "description(NULL)");
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Input in(data, size);
  Model m;
  op_create(m);
  for (int steps = 0; !in.empty() && steps < 256; ++steps) {
    switch (in.byte() % 16) {
      case 0: op_create(m); break;
      case 1: case 2: op_set_global(m, in); break;
      case 3: op_set_node(m, in); break;
      case 4: case 5: op_layout(m, in); break;
      case 6: op_unset(m, in); break;
      case 7: op_is(m); break;
      case 8: op_get_int(m, in); break;
      case 9: op_get_ints(m, in); break;
      case 10: op_get_group(m, in); break;
      case 11: op_create_process_group(m, in); break;
      case 12: op_collective(m, in); break;
      case 13: op_get_mesh(m, in); break;
      case 14: op_describe(m, in); break;
      default: (in.byte() & 1) ? op_misc(m, in) : op_nulls(in); break;
    }
  }
  destroy_state(m);
  return 0;
}
