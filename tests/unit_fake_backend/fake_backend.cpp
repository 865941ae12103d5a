#include "fake_backend.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "comm/dtype.h"
#include "comm/reduce.h"
#include "common/error.h"
#include "fake_fabric.h"
#include "memory_exchange.h"

namespace fake {

namespace {

using xffl::comm::GroupSpec;

std::mutex journal_mutex;
std::map<int, std::vector<std::string>> journals;

void note(int rank, const std::string &line) {
  std::lock_guard<std::mutex> lock(journal_mutex);
  journals[rank].push_back(line);
}

// The job's group authority, as the store is one for every rank.
xffl_test::MemoryExchange &authority() {
  static xffl_test::MemoryExchange exchange;
  return exchange;
}

// What a backend shares with its communicators: the timeout (Backend::apply) and its streams.
struct Shared {
  int rank = 0;
  int timeout_ms = 0;
  std::vector<char> streams;  // a stream is the address of one of these bytes
};

// out = op over every member of `inputs` (each `count` elements of dtype, starting at element `first`),
// reduced in member order in the accumulation type, as the real backends do.
void reduce_all(const std::vector<const void *> &inputs, size_t first, size_t count, xffl_dtype_t dtype,
                xffl_redop_t op, void *out) {
  const xffl_dtype_t acc = xffl::comm::accumulation_dtype(dtype, op);
  const size_t size = xffl::comm::dtype_size(dtype), acc_size = xffl::comm::dtype_size(acc);
  std::vector<unsigned char> total(count * acc_size), next(count * acc_size);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto *from = static_cast<const unsigned char *>(inputs[i]) + first * size;
    xffl::comm::convert(from, dtype, i == 0 ? total.data() : next.data(), acc, count);
    if (i > 0) xffl::comm::combine(total.data(), total.data(), next.data(), count, acc, op);
  }
  if (op == XFFL_AVG) xffl::comm::divide(total.data(), count, acc, static_cast<int>(inputs.size()));
  xffl::comm::convert(total.data(), acc, out, dtype, count);
}

class FakeCommunicator final : public xffl::comm::Communicator {
 public:
  FakeCommunicator(std::shared_ptr<Shared> shared, const GroupSpec &group)
      : shared_(std::move(shared)),
        meeting_(meeting(group.tag, group.members.to_vector())),
        index_(group.my_index),
        size_(group.members.size()),
        who_("fake backend: rank " + std::to_string(shared_->rank) + " in " + group.description) {}

  void allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                 void *stream) override {
    check(stream, "allreduce");
    std::vector<unsigned char> result(count * xffl::comm::dtype_size(dtype));
    reduce_all(show(send), 0, count, dtype, op, result.data());
    finish(recv, result);
  }
  void broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *stream) override {
    check(stream, "broadcast");
    const auto *root = static_cast<const unsigned char *>(show(buf)[static_cast<size_t>(root_index)]);
    std::vector<unsigned char> result(root, root + count * xffl::comm::dtype_size(dtype));
    finish(buf, result);
  }
  void allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *stream) override {
    check(stream, "allgather");
    const size_t bytes = send_count * xffl::comm::dtype_size(dtype);
    std::vector<unsigned char> result(bytes * static_cast<size_t>(size_));
    const std::vector<const void *> &inputs = show(send);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (bytes) std::memcpy(result.data() + i * bytes, inputs[i], bytes);
    finish(recv, result);
  }
  void reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op,
                      void *stream) override {
    check(stream, "reduce_scatter");
    std::vector<unsigned char> result(recv_count * xffl::comm::dtype_size(dtype));
    reduce_all(show(send), static_cast<size_t>(index_) * recv_count, recv_count, dtype, op, result.data());
    finish(recv, result);
  }
  void barrier() override {
    show(nullptr);
    meeting_->done(shared_->timeout_ms, who_);
  }

 private:
  // Device semantics: the work is ordered on one of this backend's streams; there is no default one.
  void check(void *stream, const char *call) const {
    const char *first = shared_->streams.data();
    if (!stream || stream < static_cast<const void *>(first) ||
        stream >= static_cast<const void *>(first + shared_->streams.size()))
      (xffl::fail)(XFFL_EINVAL, who_, ": ", call, " on stream ", stream,
                   ", not one of this backend's (xffl_get_stream)");
  }
  const std::vector<const void *> &show(const void *input) {
    return meeting_->show(index_, input, shared_->timeout_ms, who_);
  }
  void finish(void *out, const std::vector<unsigned char> &result) {
    meeting_->done(shared_->timeout_ms, who_);  // every input read: outputs may be written now
    if (!result.empty()) std::memcpy(out, result.data(), result.size());
  }

  std::shared_ptr<Shared> shared_;
  std::shared_ptr<Meeting> meeting_;
  int index_;
  int size_;
  std::string who_;
};

class FakeBackend final : public xffl::comm::Backend {
 public:
  explicit FakeBackend(const xffl::comm::BackendSetup &setup) : shared_(std::make_shared<Shared>()) {
    shared_->rank = setup.rank;
    shared_->timeout_ms = setup.timeout_ms;
    note(setup.rank, "make " + std::to_string(setup.world_size));
  }

  xffl_backend_t kind() const override { return kFakeBackend; }
  std::unique_ptr<xffl::comm::Communicator> create_communicator(const GroupSpec &group) override {
    note(shared_->rank, "create_communicator " + group.description);
    return std::make_unique<FakeCommunicator>(shared_, group);
  }
  xffl::comm::GroupIdentity claim_group(const std::vector<int> &sorted_members, uint32_t creation) override {
    note(shared_->rank, "claim_group");
    return authority().claim_group(sorted_members, creation, shared_->timeout_ms);
  }
  void release_group(uint32_t slot) noexcept override { authority().release_group(slot); }

  xffl::comm::MemoryKind memory_kind() const override { return xffl::comm::MemoryKind::kDevice; }
  bool accepts_streams() const override { return true; }
  void apply(const xffl::comm::LiveSettings &settings) override {
    note(shared_->rank, "apply timeout " + std::to_string(settings.timeout_ms));
    shared_->timeout_ms = settings.timeout_ms;
  }
  void set_node_place(int node_local_rank, int node_local_size) override {
    note(shared_->rank, "set_node_place " + std::to_string(node_local_rank) + " " + std::to_string(node_local_size));
  }
  xffl::comm::DeviceChoice select_device(int device_index, int node_local_rank, int streams) override {
    note(shared_->rank, "select_device " + std::to_string(device_index) + " " + std::to_string(node_local_rank) +
                            " " + std::to_string(streams));
    shared_->streams.assign(static_cast<size_t>(streams), 0);
    return {device_index < 0 ? node_local_rank % kDevices : device_index, kDevices};
  }
  void *stream(int index) override {
    note(shared_->rank, "stream " + std::to_string(index));
    return &shared_->streams.at(static_cast<size_t>(index));
  }
  void register_world(const GroupSpec &world) override {
    note(shared_->rank, "register_world " + std::to_string(world.members.size()));
  }
  bool prepare_family(const GroupSpec &group, int instance) override {
    note(shared_->rank, "prepare_family " + group.description + " " + std::to_string(instance));
    return true;  // made now, in layout order, as an eager backend's are
  }

 private:
  std::shared_ptr<Shared> shared_;
};

std::shared_ptr<xffl::comm::Backend> make_fake(const xffl::comm::BackendSetup &setup) {
  return std::make_shared<FakeBackend>(setup);
}

}  // namespace

const xffl::comm::BackendMaker kFakeMaker{/*load=*/nullptr, /*rendezvous=*/false, /*barrier=*/false,
                                          /*takes_crossing=*/false, &make_fake};

std::vector<std::string> journal(int rank) {
  std::lock_guard<std::mutex> lock(journal_mutex);
  return journals[rank];
}

}  // namespace fake
