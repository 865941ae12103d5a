// The cross-facility transport (comm/wan) with threads as ranks over loopback: collectives exact and
// bit-identical on every member with 1 and 4 streams, with and without encryption; a byte flipped on
// the link (a TCP proxy between two ranks) fails the receiver with XFFL_EAUTH, never a wrong result;
// a wrong secret is XFFL_EAUTH; a peer that leaves is XFFL_EPEER; the main backend refuses wan; the
// ring's window follows XFFL_WAN_BDP.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/algorithm_choice.h"
#include "comm/wan/wan_backend.h"
#include "comm/wan/wan_communicator.h"
#include "common/error.h"
#include "memory_exchange.h"
#include "relay_server.h"
#include "topology/rank_list.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using xffl::comm::Communicator;
using xffl::comm::WanBackend;
using xffl::comm::wan::WanSettings;

struct Outcome {
  xffl_status_t status = XFFL_OK;
  std::string message;
};

WanSettings settings_for(int rank, int world, int streams, xffl_wan_encryption_t encryption,
                         const std::string &secret = "test-secret") {
  WanSettings s;
  s.rank = rank;
  s.world_size = world;
  s.timeout_ms = 10000;
  s.streams = streams;
  s.encryption = encryption;
  s.secret = secret;
  s.job_id = "wan-test";
  s.store_host = "127.0.0.1";
  return s;
}

std::unique_ptr<Communicator> group_of(WanBackend &backend, int world, int rank) {
  std::vector<int> members;
  for (int r = 0; r < world; ++r) members.push_back(r);
  xffl::comm::GroupSpec spec;
  spec.members = xffl::topology::RankList::explicit_ranks(members);
  spec.my_index = rank;
  spec.description = "federated group (instance 0)";
  spec.tag = 5;
  spec.crosses_facilities = true;
  return backend.create_communicator(spec);
}

using Body = std::function<void(int rank, Communicator &comm)>;

// Runs body on `world` threads, each with its own backend and communicator; before any rank starts,
// `prepare` may rewrite what the exchange holds (the tamper test puts a proxy's address there).
std::vector<Outcome> run_ranks(int world, const std::function<WanSettings(int)> &settings, const Body &body,
                               const std::function<void(xffl_test::MemoryExchange &)> &prepare = {}) {
  auto exchange = std::make_shared<xffl_test::MemoryExchange>();
  std::vector<std::unique_ptr<WanBackend>> backends;
  for (int rank = 0; rank < world; ++rank) backends.push_back(std::make_unique<WanBackend>(settings(rank), exchange));
  if (prepare) prepare(*exchange);
  std::vector<Outcome> outcomes(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        std::unique_ptr<Communicator> comm = group_of(*backends[static_cast<size_t>(rank)], world, rank);
        body(rank, *comm);
      } catch (const xffl::Error &error) {
        outcomes[static_cast<size_t>(rank)] = {error.status(), error.what()};
      }
    });
  for (auto &thread : threads) thread.join();
  return outcomes;
}

void expect_ok(const std::vector<Outcome> &outcomes) {
  for (size_t r = 0; r < outcomes.size(); ++r)
    if (outcomes[r].status != XFFL_OK) fail_msg("rank %zu: %s", r, outcomes[r].message.c_str());
}

void expect_contains(const std::string &text, const std::string &part) {
  if (text.find(part) == std::string::npos) fail_msg("\"%s\" lacks \"%s\"", text.c_str(), part.c_str());
}

// Every collective, small and large (the ring with many frames per chunk), exact and bit-identical.
void collectives_exact_over_streams_and_ciphers(void **) {
  const xffl_wan_encryption_t ciphers[] = {XFFL_WAN_ENCRYPTION_NONE, XFFL_WAN_ENCRYPTION_AES_256_GCM,
                                           XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305};
  for (int world : {2, 3}) {
    for (int streams : {1, 4}) {
      for (xffl_wan_encryption_t cipher : ciphers) {
        const size_t count = (size_t{3} << 20) / 4 + 7;  // 3 MiB of f32: chunks of 4 frames, a ragged end
        std::vector<std::vector<float>> results(static_cast<size_t>(world));
        auto outcomes = run_ranks(
            world, [&](int rank) { return settings_for(rank, world, streams, cipher); },
            [&](int rank, Communicator &comm) {
              std::vector<float> x(count);
              for (size_t i = 0; i < count; ++i) x[i] = static_cast<float>((rank + 1) * static_cast<int>(i % 17));
              comm.allreduce(x.data(), x.data(), count, XFFL_F32, XFFL_SUM, nullptr);
              for (size_t i = 0; i < count; ++i) {
                const float want = static_cast<float>(world * (world + 1) / 2 * static_cast<int>(i % 17));
                if (x[i] != want) (xffl::fail)(XFFL_EINTERNAL, "allreduce[", i, "] = ", x[i], ", want ", want);
              }
              results[static_cast<size_t>(rank)] = x;
              // Small: recursive doubling. Broadcast from the last member, allgather, reduce_scatter, barrier.
              int64_t small[3] = {rank, 10 * rank, 1};
              comm.allreduce(small, small, 3, XFFL_I64, XFFL_MAX, nullptr);
              if (small[0] != world - 1 || small[2] != 1) (xffl::fail)(XFFL_EINTERNAL, "small allreduce");
              std::vector<int32_t> b(100000, rank == world - 1 ? 42 : -1);
              comm.broadcast(b.data(), b.size(), XFFL_I32, world - 1, nullptr);
              for (int32_t v : b)
                if (v != 42) (xffl::fail)(XFFL_EINTERNAL, "broadcast");
              std::vector<int32_t> gathered(static_cast<size_t>(world) * 3000);
              std::vector<int32_t> mine(3000, rank);
              comm.allgather(mine.data(), gathered.data(), 3000, XFFL_I32, nullptr);
              for (size_t i = 0; i < gathered.size(); ++i)
                if (gathered[i] != static_cast<int32_t>(i / 3000)) (xffl::fail)(XFFL_EINTERNAL, "allgather");
              std::vector<double> all(static_cast<size_t>(world) * 500, 1.5), part(500);
              comm.reduce_scatter(all.data(), part.data(), 500, XFFL_F64, XFFL_AVG, nullptr);
              for (double v : part)
                if (v != 1.5) (xffl::fail)(XFFL_EINTERNAL, "reduce_scatter");
              comm.barrier();
            });
        expect_ok(outcomes);
        for (int r = 1; r < world; ++r)
          assert_memory_equal(results[0].data(), results[static_cast<size_t>(r)].data(), count * sizeof(float));
      }
    }
  }
}

// Back-to-back averages of mixed sizes in place (as federated_average_many runs them), two members: a
// member's next call starts while the other's messages of the last one are in flight. The large calls
// are 20 MiB, or 8 MiB in a sanitized build (XFFL_TEST_SANITIZED; still 4 chunks per block): TSan's
// loops over them were a third of this program's time there.
void back_to_back_averages_of_mixed_sizes(void **) {
#ifdef XFFL_TEST_SANITIZED
  constexpr size_t kLarge = size_t{2} << 20;
#else
  constexpr size_t kLarge = size_t{5} << 20;
#endif
  for (int streams : {1, 4}) {
    auto outcomes = run_ranks(
        2, [&](int rank) { return settings_for(rank, 2, streams, XFFL_WAN_ENCRYPTION_NONE); },
        [&](int rank, Communicator &comm) {
          for (size_t count : {size_t{1092}, kLarge, size_t{3}, kLarge}) {
            std::vector<float> x(count);
            for (size_t i = 0; i < count; ++i) x[i] = static_cast<float>((rank + 1) * static_cast<int>((i + 4) % 13));
            comm.allreduce_scaled(x.data(), count, XFFL_F32, XFFL_AVG, 1.0, nullptr);
            for (size_t i = 0; i < count; ++i) {
              const float want = 1.5f * static_cast<float>((i + 4) % 13);
              if (x[i] != want) (xffl::fail)(XFFL_EINTERNAL, "count ", count, ": [", i, "] = ", x[i], ", want ", want);
            }
          }
        });
    expect_ok(outcomes);
  }
}

// XFFL_WAN_BDP: the ring keeps algorithm_choice::wan_ring_window chunks in flight, or about twice the
// bandwidth-delay product when that is more (up to 4096 chunks), and the collectives stay exact with
// every window (a 64 MiB BDP: 130 chunks, more than a 9 MiB call has).
void window_follows_the_bdp(void **) {
  const size_t chunk = xffl::comm::algorithm_choice::ring_chunk_bytes;
  const struct {
    size_t bdp;
    int window;
  } cases[] = {{0, xffl::comm::algorithm_choice::wan_ring_window},
               {4 * chunk, xffl::comm::algorithm_choice::wan_ring_window},
               {16 * chunk, 34},
               {64 * chunk, 130},
               {size_t{1} << 40, 4096}};
  for (const auto &c : cases) {
    auto outcomes = run_ranks(
        2,
        [&](int rank) {
          WanSettings s = settings_for(rank, 2, 2, XFFL_WAN_ENCRYPTION_NONE);
          s.bdp_bytes = c.bdp;
          return s;
        },
        [&](int rank, Communicator &comm) {
          const int window = dynamic_cast<xffl::comm::wan::WanCommunicator &>(comm).tuning().window;
          if (window != c.window)
            (xffl::fail)(XFFL_EINTERNAL, "XFFL_WAN_BDP ", c.bdp, ": a window of ", window, " chunks, want ", c.window);
          const size_t count = 9 * chunk / 4 + 3;
          std::vector<float> x(count, static_cast<float>(rank + 1));
          comm.allreduce(x.data(), x.data(), count, XFFL_F32, XFFL_SUM, nullptr);
          for (size_t i = 0; i < count; ++i)
            if (x[i] != 3.0f) (xffl::fail)(XFFL_EINTERNAL, "window ", window, ": [", i, "] = ", x[i]);
        });
    expect_ok(outcomes);
  }
}

// XFFL_WAN_DIAL_OUT: a dial-out rank never listens and publishes kDialOutOnly; it dials every peer,
// lower ranks included, and the collectives are exact. Three members: rank 1 dials out, so it dials
// rank 0 (which would otherwise dial it) and rank 2 as usual. Two dial-out members: XFFL_EINVAL on
// both, naming both ranks, within the timeout.
void dial_out_rank_dials_every_peer(void **) {
  for (int streams : {1, 3}) {
    auto outcomes = run_ranks(
        3,
        [&](int rank) {
          WanSettings s = settings_for(rank, 3, streams, XFFL_WAN_ENCRYPTION_AES_256_GCM);
          s.dial_out = rank == 1;
          return s;
        },
        [&](int rank, Communicator &comm) {
          std::vector<float> x((size_t{1} << 20) + 5);
          for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((rank + 1) * static_cast<int>(i % 11));
          comm.allreduce(x.data(), x.data(), x.size(), XFFL_F32, XFFL_SUM, nullptr);
          for (size_t i = 0; i < x.size(); ++i)
            if (x[i] != static_cast<float>(6 * static_cast<int>(i % 11)))
              (xffl::fail)(XFFL_EINTERNAL, "allreduce[", i, "] = ", x[i]);
          int32_t b = rank == 0 ? 7 : -1;
          comm.broadcast(&b, 1, XFFL_I32, 0, nullptr);
          if (b != 7) (xffl::fail)(XFFL_EINTERNAL, "broadcast from rank 0 gave ", b);
        },
        [](xffl_test::MemoryExchange &exchange) {
          const std::vector<uint8_t> entry = exchange.fetch("xffl/wan/addr/1", 1000);
          if (std::string(entry.begin(), entry.end()) != xffl::comm::wan::kDialOutOnly)
            (xffl::fail)(XFFL_EINTERNAL, "rank 1 published '", std::string(entry.begin(), entry.end()), "'");
        });
    expect_ok(outcomes);
  }
  auto outcomes = run_ranks(
      2,
      [&](int rank) {
        WanSettings s = settings_for(rank, 2, 2, XFFL_WAN_ENCRYPTION_NONE);
        s.dial_out = true;
        return s;
      },
      [&](int, Communicator &comm) {
        float x = 1;
        comm.allreduce(&x, &x, 1, XFFL_F32, XFFL_SUM, nullptr);
      });
  for (const Outcome &outcome : outcomes) {
    assert_int_equal(outcome.status, XFFL_EINVAL);
    expect_contains(outcome.message, "ranks 0 and 1 both dial out only (XFFL_WAN_DIAL_OUT=1)");
  }
}

// An xffl-relay (tools/xffl-relay) on loopback in a thread, until stop() or the end of the object.
class ThreadRelay {
 public:
  ThreadRelay() {
    if (::pipe(stop_) != 0) (xffl::fail)(XFFL_EINTERNAL, "pipe");
    xffl::relay::RelayOptions options;
    options.pair_seconds = 20;
    options.level = xffl::relay::Level::kWarn;
    server_ = std::make_unique<xffl::relay::RelayServer>(options);
    thread_ = std::thread([this] { server_->run(stop_[0]); });
  }
  ~ThreadRelay() {
    stop();
    ::close(stop_[0]);
    ::close(stop_[1]);
  }
  const std::string &address() const { return server_->address(); }
  const xffl::relay::RelayTotals &totals() const { return server_->totals(); }  // after stop()
  // Closes every connection at once, as a relay that is killed.
  void stop() {
    if (!thread_.joinable()) return;
    const char byte = 1;
    if (::write(stop_[1], &byte, 1) != 1) (xffl::fail)(XFFL_EINTERNAL, "write");
    thread_.join();
  }

 private:
  int stop_[2] = {-1, -1};
  std::unique_ptr<xffl::relay::RelayServer> server_;
  std::thread thread_;
};

// XFFL_WAN_RELAY: every route of WanHub::route in one group of four. Rank 0 listens; rank 1 dials out
// without a relay; ranks 2 and 3 have relays A and B. Ranks 1, 2, 3 dial rank 0 directly; 1 meets 2
// at A and 3 at B (1 calls); 2 and 3 meet at B (the higher rank's relay; 2 calls). Collectives exact
// with encryption through the relays; each relay paired its streams; ranks 2 and 3 published their
// relay, never an address.
void relayed_ranks_meet_at_relays(void **) {
  ThreadRelay a, b;
  const int streams = 2;
  auto outcomes = run_ranks(
      4,
      [&](int rank) {
        WanSettings s = settings_for(rank, 4, streams, XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305);
        s.dial_out = rank == 1;
        if (rank == 2) s.relay = a.address();
        if (rank == 3) s.relay = b.address();
        return s;
      },
      [&](int rank, Communicator &comm) {
        std::vector<float> x((size_t{1} << 20) + 3);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((rank + 1) * static_cast<int>(i % 7));
        comm.allreduce(x.data(), x.data(), x.size(), XFFL_F32, XFFL_SUM, nullptr);
        for (size_t i = 0; i < x.size(); ++i)
          if (x[i] != static_cast<float>(10 * static_cast<int>(i % 7)))
            (xffl::fail)(XFFL_EINTERNAL, "allreduce[", i, "] = ", x[i]);
        int32_t v = rank == 3 ? 9 : -1;
        comm.broadcast(&v, 1, XFFL_I32, 3, nullptr);
        if (v != 9) (xffl::fail)(XFFL_EINTERNAL, "broadcast from rank 3 gave ", v);
      },
      [&](xffl_test::MemoryExchange &exchange) {
        const std::vector<uint8_t> entry = exchange.fetch("xffl/wan/addr/2", 1000);
        if (std::string(entry.begin(), entry.end()) != xffl::comm::wan::kViaRelay + a.address())
          (xffl::fail)(XFFL_EINTERNAL, "rank 2 published '", std::string(entry.begin(), entry.end()), "'");
      });
  expect_ok(outcomes);

  // Three members, each behind its own relay: every pair is relayed and the ring's posts form a cycle
  // (each rank sends to the next and receives from the one before); made by every wait, the relayed
  // streams do not wait on one another (wan_hub.h). The pairs meet at the higher rank's relay.
  ThreadRelay c;
  const std::string relays[3] = {a.address(), b.address(), c.address()};
  outcomes = run_ranks(
      3,
      [&](int rank) {
        WanSettings s = settings_for(rank, 3, streams, XFFL_WAN_ENCRYPTION_AES_256_GCM);
        s.relay = relays[rank];
        return s;
      },
      [&](int rank, Communicator &comm) {
        std::vector<float> x((size_t{1} << 20) + 3);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((rank + 1) * static_cast<int>(i % 5));
        comm.allreduce(x.data(), x.data(), x.size(), XFFL_F32, XFFL_SUM, nullptr);
        for (size_t i = 0; i < x.size(); ++i)
          if (x[i] != static_cast<float>(6 * static_cast<int>(i % 5)))
            (xffl::fail)(XFFL_EINTERNAL, "allreduce[", i, "] = ", x[i]);
      });
  expect_ok(outcomes);
  c.stop();
  assert_int_equal(c.totals().pairs, static_cast<uint64_t>(2 * streams));  // (0, 2), (1, 2)
  a.stop();
  b.stop();
  assert_int_equal(a.totals().pairs, static_cast<uint64_t>(streams));      // (1, 2)
  assert_int_equal(b.totals().pairs, static_cast<uint64_t>(3 * streams));  // (1, 3), (2, 3); then (0, 1)
  assert_int_equal(a.totals().dropped + b.totals().dropped, 0);
}

// A relay that goes away in the middle of the transfers: both ranks fail within the timeout, naming
// the relay, never hang. A relay that never pairs (the peer never comes): XFFL_ETIMEOUT naming it.
void relay_that_stops_fails_the_ranks(void **) {
  ThreadRelay relay;
  std::atomic<int> averaged{0};
  std::thread killer([&] {
    while (averaged.load() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    relay.stop();
  });
  auto outcomes = run_ranks(
      2,
      [&](int rank) {
        WanSettings s = settings_for(rank, 2, 2, XFFL_WAN_ENCRYPTION_AES_256_GCM);
        s.timeout_ms = 5000;
        s.dial_out = rank == 0;
        if (rank == 1) s.relay = relay.address();
        return s;
      },
      [&](int, Communicator &comm) {
        std::vector<float> x(size_t{4} << 20, 1.0f);
        for (int round = 0; round < 100000; ++round) {
          comm.allreduce(x.data(), x.data(), x.size(), XFFL_F32, XFFL_AVG, nullptr);
          ++averaged;
        }
      });
  killer.join();
  for (const Outcome &outcome : outcomes) {
    if (outcome.status != XFFL_EPEER && outcome.status != XFFL_ENETWORK)
      fail_msg("status %d: %s", outcome.status, outcome.message.c_str());
    expect_contains(outcome.message, "through the relay at " + relay.address());
  }

  ThreadRelay lonely;
  outcomes = run_ranks(
      2,
      [&](int rank) {
        WanSettings s = settings_for(rank, 2, 1, XFFL_WAN_ENCRYPTION_NONE);
        s.timeout_ms = 1500;
        s.relay = rank == 1 ? lonely.address() : "127.0.0.1:1";  // rank 0's relay is never used
        return s;
      },
      [&](int rank, Communicator &comm) {
        if (rank == 1) return;  // never comes
        float x = 1;
        comm.allreduce(&x, &x, 1, XFFL_F32, XFFL_SUM, nullptr);
      });
  assert_int_equal(outcomes[0].status, XFFL_ETIMEOUT);
  expect_contains(outcomes[0].message, "the relay at " + lonely.address() + " did not pair stream 0 of 1 with rank 1");
}

// A proxy between rank 0 (the dialer) and rank 1 that flips one byte of the first frame rank 0 sends.
class TamperProxy {
 public:
  TamperProxy(const std::string &target, size_t flip_at) : flip_at_(flip_at) {
    const size_t colon = target.rfind(':');
    target_port_ = std::atoi(target.c_str() + colon + 1);
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr *>(&address), sizeof address);
    ::listen(listener_, 4);
    socklen_t length = sizeof address;
    ::getsockname(listener_, reinterpret_cast<sockaddr *>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { forward(); });
  }
  ~TamperProxy() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  bool flipped() const { return flipped_; }

 private:
  void forward() {
    pollfd waiting{listener_, POLLIN, 0};
    while (!stop_ && ::poll(&waiting, 1, 100) == 0) {
    }
    if (stop_) return;
    const int client = ::accept(listener_, nullptr, nullptr);
    const int server = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(target_port_));
    ::connect(server, reinterpret_cast<sockaddr *>(&address), sizeof address);
    size_t upstream = 0;
    std::vector<uint8_t> buffer(1 << 16);
    pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
    while (!stop_) {
      if (::poll(fds, 2, 100) <= 0) continue;
      for (int side = 0; side < 2; ++side) {
        if (!fds[side].revents) continue;
        const ssize_t n = ::read(fds[side].fd, buffer.data(), buffer.size());
        if (n <= 0) {
          ::close(client);
          ::close(server);
          return;
        }
        if (side == 0 && flip_at_ >= upstream && flip_at_ < upstream + static_cast<size_t>(n)) {
          buffer[flip_at_ - upstream] ^= 0x40;
          flipped_ = true;
        }
        if (side == 0) upstream += static_cast<size_t>(n);
        ::write(fds[1 - side].fd, buffer.data(), static_cast<size_t>(n));
      }
    }
    ::close(client);
    ::close(server);
  }

  size_t flip_at_;
  int target_port_ = 0;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> flipped_{false};
  std::thread thread_;
};

// hello (76 bytes) and the dialer's proof (32) come first; then the first frame's header (32 bytes).
constexpr size_t kFirstPayloadByte = 76 + 32 + 32;

void flipped_byte_on_the_link_is_eauth(void **) {
  for (xffl_wan_encryption_t cipher : {XFFL_WAN_ENCRYPTION_AES_256_GCM, XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305}) {
    for (size_t where : {kFirstPayloadByte + 100, kFirstPayloadByte - 20 /* the header */}) {
      std::unique_ptr<TamperProxy> proxy;
      std::vector<float> result(4096, -1.0f);  // rank 0's
      auto outcomes = run_ranks(
          2, [&](int rank) { return settings_for(rank, 2, 1, cipher); },
          [&](int rank, Communicator &comm) {
            std::vector<float> x(4096, static_cast<float>(rank + 1));
            comm.allreduce(x.data(), x.data(), x.size(), XFFL_F32, XFFL_SUM, nullptr);
            if (rank == 0) result = x;
          },
          [&](xffl_test::MemoryExchange &exchange) {
            const std::vector<uint8_t> real = exchange.fetch("xffl/wan/addr/1", 1000);
            proxy = std::make_unique<TamperProxy>(std::string(real.begin(), real.end()), where);
            const std::string fake = proxy->address();
            exchange.publish("xffl/wan/addr/1", std::vector<uint8_t>(fake.begin(), fake.end()));
          });
      assert_true(proxy->flipped());
      if (outcomes[1].status != XFFL_EAUTH) fail_msg("rank 1: %d %s", outcomes[1].status, outcomes[1].message.c_str());
      expect_contains(outcomes[1].message, "peer rank 0");
      expect_contains(outcomes[1].message, "federated group (instance 0)");
      // Rank 0 received rank 1's bytes untouched (recursive doubling: one exchange): it may finish, and
      // then with the exact sum; otherwise it fails too. Never a wrong result.
      if (outcomes[0].status == XFFL_OK)
        for (float v : result) assert_true(v == 3.0f);
      proxy.reset();
    }
  }
}

void wrong_secret_is_eauth(void **) {
  auto outcomes = run_ranks(
      2, [&](int rank) { return settings_for(rank, 2, 2, XFFL_WAN_ENCRYPTION_NONE, rank == 0 ? "one" : "two"); },
      [&](int, Communicator &comm) { comm.barrier(); });
  assert_int_equal(outcomes[0].status, XFFL_EAUTH);  // the dialer checks the acceptor's proof first
  expect_contains(outcomes[0].message, "XFFL_AUTH_TOKEN");
  assert_int_equal(outcomes[1].status, XFFL_EAUTH);  // the acceptor sees the dialer hang up on its proof
  expect_contains(outcomes[1].message, "rank 0");
}

void peer_that_leaves_is_epeer(void **) {
  auto outcomes = run_ranks(
      2, [&](int rank) { return settings_for(rank, 2, 4, XFFL_WAN_ENCRYPTION_NONE); },
      [&](int rank, Communicator &comm) {
        comm.barrier();
        if (rank == 1) return;  // leaves: its streams close with the communicator
        std::vector<float> x(1 << 20, 1.0f);
        comm.allreduce(x.data(), x.data(), x.size(), XFFL_F32, XFFL_SUM, nullptr);
      });
  assert_int_equal(outcomes[1].status, XFFL_OK);
  assert_int_equal(outcomes[0].status, XFFL_EPEER);
  expect_contains(outcomes[0].message, "peer rank 1");
}

void settings_are_checked(void **) {
  auto exchange = std::make_shared<xffl_test::MemoryExchange>();
  for (int streams : {0, 65}) {
    try {
      WanBackend backend(settings_for(0, 1, streams, XFFL_WAN_ENCRYPTION_NONE), exchange);
      fail_msg("streams %d accepted", streams);
    } catch (const xffl::Error &error) {
      assert_int_equal(error.status(), XFFL_EINVAL);
      expect_contains(error.what(), std::to_string(streams));
    }
  }
  try {
    WanBackend backend(settings_for(0, 1, 4, XFFL_WAN_ENCRYPTION_AES_256_GCM, ""), exchange);
    fail_msg("encryption without a secret accepted");
  } catch (const xffl::Error &error) {
    assert_int_equal(error.status(), XFFL_EINVAL);
    expect_contains(error.what(), "XFFL_AUTH_TOKEN");
  }
  // As the main backend: refused by its maker.
  xffl::comm::BackendSetup setup;
  setup.exchange = exchange;
  setup.timeout_ms = 1000;
  try {
    xffl::comm::kWanMaker.make(setup);
    fail_msg("wan accepted as the main backend");
  } catch (const xffl::Error &error) {
    assert_int_equal(error.status(), XFFL_EUNSUPPORTED);
    expect_contains(error.what(), "XFFL_OPT_CROSS_FACILITY_BACKEND");
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(collectives_exact_over_streams_and_ciphers),
      cmocka_unit_test(back_to_back_averages_of_mixed_sizes),
      cmocka_unit_test(window_follows_the_bdp),
      cmocka_unit_test(dial_out_rank_dials_every_peer),
      cmocka_unit_test(relayed_ranks_meet_at_relays),
      cmocka_unit_test(relay_that_stops_fails_the_ranks),
      cmocka_unit_test(flipped_byte_on_the_link_is_eauth),
      cmocka_unit_test(wrong_secret_is_eauth),
      cmocka_unit_test(peer_that_leaves_is_epeer),
      cmocka_unit_test(settings_are_checked),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
