// delay_relay: one end of a delaying IP-in-UDP tunnel between two network namespaces.
//
//   delay_relay --tun NAME --local ADDR:PORT (--peer ADDR:PORT | --route SUBNET/LEN=ADDR:PORT ...)
//               --delay-ms D [--ready FILE] [--flip-segment N [--flip-incoming] [--flip-after-usr1]]
//               [--hold-after-usr2 QUIET_MS]
//
// Packets the kernel routes into the TUN device NAME (the other facilities' subnets) are held D ms and
// then sent as one UDP datagram each to a peer relay over the veth; datagrams from the peers are
// written into the TUN device at once. One relay per namespace gives D ms each way (this kernel has no
// netem). The veth's tbf qdisc shapes the datagrams and its counters count them.
// --peer: every packet goes to that one relay (two facilities). --route (repeatable, three facilities
// or more): each packet goes to the relay of the first route whose subnet holds its IPv4 destination;
// a packet no route holds is dropped (counted as a send failure).
//
// One thread, one ppoll loop: the delay is constant, so a FIFO ordered by arrival is also ordered
// by departure time. The queue is bounded like a router's buffer; beyond it packets are dropped and
// TCP backs off. A send error (the veth is down) drops the packet: the link is simply cut.
// --flip-segment N corrupts the link once: in the N-th TCP segment (from 1) with at least
// kFlipMinPayload payload bytes that this relay sends, one payload byte is flipped and the TCP checksum
// recomputed, so the receiver's kernel accepts it and only the application can notice (bulk data of
// the cross-facility transport; the store's and UCX's control messages are smaller).
// --flip-incoming counts (and flips) the segments this relay receives from its peers and writes into
// the TUN device instead, i.e. traffic toward this facility; the checksum fix is the same.
// --flip-after-usr1 counts nothing until the relay gets SIGUSR1 (a test arms it just before the
// transfer it means to corrupt, e.g. a heal toward a restarted facility).
// --hold-after-usr2 QUIET_MS catches this facility's crossing rank inside a cross-facility collective:
// armed by SIGUSR2, the relay waits for a large TCP segment going out (bulk data: only the crossing
// collectives send any) after at least QUIET_MS ms in which none went out, i.e. the first bulk data of
// a collective, not the tail of the previous one; from that packet on it drops every datagram toward
// this facility (its TUN gets nothing) and prints "holding ...". The collective has just sent its
// first data and cannot complete: whatever it still needs from the others has to come in. A second
// SIGUSR2 lets traffic in again ("released"). A test kills the rank while the relay holds.
// SIGTERM / SIGINT end the loop; counters go to stderr. Exit 0, or 2 on bad arguments, 1 on setup
// failure (message on stderr).
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr size_t kMaxPacket = 65536;
constexpr size_t kQueueLimitBytes = 16u << 20;  // about 130 ms at 1 Gbit/s: a deep router buffer
constexpr int kSocketBufferBytes = 16 << 20;
constexpr size_t kFlipMinPayload = 4096;

volatile sig_atomic_t stop_requested = 0;
volatile sig_atomic_t flip_armed = 1;  // --flip-after-usr1: 0 until SIGUSR1
volatile sig_atomic_t hold_signals = 0;  // --hold-after-usr2: SIGUSR2s received (1: armed, 2: released)
void request_stop(int) { stop_requested = 1; }
void arm_flip(int) { flip_armed = 1; }
void count_hold_signal(int) { hold_signals = hold_signals + 1; }

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "delay_relay: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

// An open descriptor, closed on every path out.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

sockaddr_in parse_endpoint(const std::string &text) {
  const size_t colon = text.rfind(':');
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (colon == std::string::npos || inet_pton(AF_INET, text.substr(0, colon).c_str(), &address.sin_addr) != 1)
    throw std::invalid_argument("'" + text + "' is not ADDR:PORT");
  const long port = std::strtol(text.c_str() + colon + 1, nullptr, 10);
  if (port <= 0 || port > 65535) throw std::invalid_argument("'" + text + "' has no valid port");
  address.sin_port = htons(static_cast<uint16_t>(port));
  return address;
}

int open_tun(const std::string &name) {
  const int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) die("open /dev/net/tun");
  ifreq request{};
  request.ifr_flags = IFF_TUN | IFF_NO_PI;  // raw IP packets, no extra header
  std::snprintf(request.ifr_name, IFNAMSIZ, "%s", name.c_str());
  if (ioctl(fd, TUNSETIFF, &request) < 0) die("attach to TUN device " + name);
  return fd;
}

int open_udp(const sockaddr_in &local) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  // Root may exceed net.core.[rw]mem_max: a relay descheduled for a few ms on a busy machine must
  // not drop what arrived meanwhile.
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &kSocketBufferBytes, sizeof kSocketBufferBytes);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &kSocketBufferBytes, sizeof kSocketBufferBytes);
  if (bind(fd, reinterpret_cast<const sockaddr *>(&local), sizeof local) < 0) die("bind the UDP socket");
  return fd;
}

timespec now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t;
}

long long to_ns(const timespec &t) { return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec; }

struct HeldPacket {
  long long due_ns;
  std::vector<unsigned char> bytes;
};

struct Counters {
  unsigned long long forwarded = 0, delivered = 0, dropped_full = 0, dropped_send = 0, dropped_write = 0;
  unsigned long long flipped = 0, held_in = 0;
};

uint32_t add_words(const unsigned char *data, size_t bytes, uint32_t sum) {
  for (size_t i = 0; i + 1 < bytes; i += 2) sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
  if (bytes & 1) sum += static_cast<uint32_t>(data[bytes - 1] << 8);
  return sum;
}

// If packet is an IPv4 TCP segment with at least kFlipMinPayload payload bytes: flips the middle
// payload byte, recomputes the TCP checksum and returns true.
bool flip_payload_byte(unsigned char *packet, size_t size) {
  if (size < 20 || (packet[0] >> 4) != 4 || packet[9] != 6) return false;
  const size_t ip_header = static_cast<size_t>(packet[0] & 0x0f) * 4;
  const size_t total = static_cast<size_t>(packet[2] << 8 | packet[3]);
  if (total > size || ip_header + 20 > total) return false;
  unsigned char *tcp = packet + ip_header;
  const size_t tcp_bytes = total - ip_header;
  const size_t tcp_header = static_cast<size_t>(tcp[12] >> 4) * 4;
  if (tcp_header > tcp_bytes || tcp_bytes - tcp_header < kFlipMinPayload) return false;
  tcp[tcp_header + (tcp_bytes - tcp_header) / 2] ^= 0x10;
  tcp[16] = tcp[17] = 0;
  uint32_t sum = add_words(packet + 12, 8, 0);  // source and destination addresses
  sum += 6 + static_cast<uint32_t>(tcp_bytes);
  sum = add_words(tcp, tcp_bytes, sum);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  const uint16_t checksum = static_cast<uint16_t>(~sum);
  tcp[16] = static_cast<unsigned char>(checksum >> 8);
  tcp[17] = static_cast<unsigned char>(checksum & 0xff);
  return true;
}

// Packets to destination & mask == network go to relay.
struct Route {
  uint32_t network = 0, mask = 0;  // host byte order
  sockaddr_in relay{};
};

Route parse_route(const std::string &text) {
  const size_t equals = text.find('='), slash = text.find('/');
  Route route;
  in_addr network{};
  if (equals == std::string::npos || slash == std::string::npos || slash > equals ||
      inet_pton(AF_INET, text.substr(0, slash).c_str(), &network) != 1)
    throw std::invalid_argument("'" + text + "' is not SUBNET/LEN=ADDR:PORT");
  const long length = std::strtol(text.c_str() + slash + 1, nullptr, 10);
  if (length < 0 || length > 32) throw std::invalid_argument("'" + text + "' has no valid prefix length");
  route.mask = length == 0 ? 0 : ~uint32_t{0} << (32 - length);
  route.network = ntohl(network.s_addr) & route.mask;
  route.relay = parse_endpoint(text.substr(equals + 1));
  return route;
}

struct Options {
  std::string tun;
  sockaddr_in local{};
  std::vector<Route> routes;  // --peer is one route of every destination
  long long delay_ns = 0;
  std::string ready_file;
  long long flip_segment = 0;  // 0: never
  bool flip_incoming = false;
  bool flip_after_usr1 = false;
  long long hold_quiet_ns = -1;  // --hold-after-usr2 QUIET_MS; -1: never
};

Options parse_options(int argc, char **argv) {
  Options options;
  bool have_local = false, have_peer = false, have_route = false, have_delay = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--flip-incoming" || flag == "--flip-after-usr1") {
      (flag == "--flip-incoming" ? options.flip_incoming : options.flip_after_usr1) = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--tun") {
      options.tun = value;
    } else if (flag == "--local") {
      options.local = parse_endpoint(value);
      have_local = true;
    } else if (flag == "--peer") {
      Route every;
      every.relay = parse_endpoint(value);
      options.routes.push_back(every);
      have_peer = true;
    } else if (flag == "--route") {
      options.routes.push_back(parse_route(value));
      have_route = true;
    } else if (flag == "--delay-ms") {
      const double ms = std::strtod(value.c_str(), nullptr);
      if (!(ms >= 0 && ms <= 10000)) throw std::invalid_argument("--delay-ms must be in [0, 10000]");
      options.delay_ns = static_cast<long long>(ms * 1e6);
      have_delay = true;
    } else if (flag == "--ready") {
      options.ready_file = value;
    } else if (flag == "--hold-after-usr2") {
      const double ms = std::strtod(value.c_str(), nullptr);
      if (!(ms >= 0 && ms <= 10000)) throw std::invalid_argument("--hold-after-usr2 must be in [0, 10000] ms");
      options.hold_quiet_ns = static_cast<long long>(ms * 1e6);
    } else if (flag == "--flip-segment") {
      options.flip_segment = std::strtoll(value.c_str(), nullptr, 10);
      if (options.flip_segment < 1) throw std::invalid_argument("--flip-segment must be at least 1");
    } else {
      throw std::invalid_argument("unknown option " + flag);
    }
  }
  if (options.tun.empty() || !have_local || have_peer == have_route || !have_delay)
    throw std::invalid_argument("--tun, --local, --delay-ms and either --peer or --route are required");
  return options;
}

class Relay {
 public:
  Relay(const Options &options)
      : options_(options), tun_(open_tun(options.tun)), udp_(open_udp(options.local)), buffer_(kMaxPacket) {}

  void run() {
    while (!stop_requested) {
      wait_for_work();
      read_tun();
      read_udp();
      send_due();
    }
  }

  const Counters &counters() const { return counters_; }

 private:
  void wait_for_work() {
    pollfd fds[2] = {{tun_.get(), POLLIN, 0}, {udp_.get(), POLLIN, 0}};
    timespec timeout{0, 200 * 1000000};  // wake now and then to notice a stop request
    if (!held_.empty()) {
      const long long wait_ns = held_.front().due_ns - to_ns(now());
      if (blocked_on_send_) fds[1].events |= POLLOUT;
      else if (wait_ns <= 0) timeout = {0, 0};
      else if (wait_ns < 200 * 1000000LL) timeout = {0, static_cast<long>(wait_ns)};
    }
    if (ppoll(fds, 2, &timeout, nullptr) < 0 && errno != EINTR) die("ppoll");
  }

  // Drain the TUN device: each packet is stamped with its departure time.
  void read_tun() {
    for (int burst = 0; burst < 256; ++burst) {
      const ssize_t n = read(tun_.get(), buffer_.data(), buffer_.size());
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return;
        die("read from the TUN device");
      }
      if (held_bytes_ + static_cast<size_t>(n) > kQueueLimitBytes) {
        ++counters_.dropped_full;
        continue;
      }
      held_.push_back(HeldPacket{to_ns(now()) + options_.delay_ns, {buffer_.begin(), buffer_.begin() + n}});
      if (options_.hold_quiet_ns >= 0) watch_outgoing(held_.back().bytes.data(), held_.back().bytes.size());
      if (!options_.flip_incoming) maybe_flip(held_.back().bytes.data(), held_.back().bytes.size());
      held_bytes_ += static_cast<size_t>(n);
    }
  }

  // Datagrams from the peer go straight into the kernel through the TUN device.
  void read_udp() {
    for (int burst = 0; burst < 256; ++burst) {
      const ssize_t n = recv(udp_.get(), buffer_.data(), buffer_.size(), 0);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return;
        ++counters_.dropped_write;  // e.g. ICMP unreachable reported on the socket: not fatal
        return;
      }
      if (holding()) {
        ++counters_.held_in;
        continue;
      }
      if (options_.flip_incoming) maybe_flip(buffer_.data(), static_cast<size_t>(n));
      if (write(tun_.get(), buffer_.data(), static_cast<size_t>(n)) == n) ++counters_.delivered;
      else ++counters_.dropped_write;
    }
  }

  void send_due() {
    blocked_on_send_ = false;
    const long long now_ns = to_ns(now());
    while (!held_.empty() && held_.front().due_ns <= now_ns) {
      HeldPacket &packet = held_.front();
      const sockaddr_in *peer = route(packet.bytes);
      const ssize_t n = peer ? sendto(udp_.get(), packet.bytes.data(), packet.bytes.size(), 0,
                                      reinterpret_cast<const sockaddr *>(peer), sizeof *peer)
                             : -1;
      if (n < 0 && peer && errno == EAGAIN) {  // socket buffer full: back-pressure, retry when writable
        blocked_on_send_ = true;
        return;
      }
      if (n < 0) ++counters_.dropped_send;  // veth down, no route (ours or the kernel's): the link is cut
      else ++counters_.forwarded;
      held_bytes_ -= packet.bytes.size();
      held_.pop_front();
    }
  }

  // The relay of the first route holding the packet's IPv4 destination; null when none does.
  const sockaddr_in *route(const std::vector<unsigned char> &packet) const {
    if (packet.size() < 20 || (packet[0] >> 4) != 4) return nullptr;
    const uint32_t destination = static_cast<uint32_t>(packet[16]) << 24 | static_cast<uint32_t>(packet[17]) << 16 |
                                 static_cast<uint32_t>(packet[18]) << 8 | packet[19];
    for (const Route &r : options_.routes)
      if ((destination & r.mask) == r.network) return &r.relay;
    return nullptr;
  }

  // --flip-segment: flips a byte of the N-th large segment this relay forwards in its direction.
  void maybe_flip(unsigned char *packet, size_t size) {
    if (options_.flip_segment == 0 || counters_.flipped != 0 || !flip_armed || !is_large_segment(packet, size) ||
        ++large_segments_ != options_.flip_segment || !flip_payload_byte(packet, size))
      return;
    ++counters_.flipped;
    std::fprintf(stderr, "delay_relay %s: flipped one payload byte of large TCP segment %lld (%s)\n",
                 options_.tun.c_str(), large_segments_, options_.flip_incoming ? "incoming" : "outgoing");
    std::fflush(stderr);
  }

  // --hold-after-usr2: a large segment out after QUIET ms without one starts the hold, once armed.
  void watch_outgoing(const unsigned char *packet, size_t size) {
    if (!is_large_segment(packet, size)) return;
    const long long at = to_ns(now());
    const long long quiet = last_large_out_ns_ < 0 ? -1 : at - last_large_out_ns_;
    last_large_out_ns_ = at;
    if (hold_signals != 1 || hold_started_ || (quiet >= 0 && quiet < options_.hold_quiet_ns)) return;
    hold_started_ = true;
    char to[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, packet + 16, to, sizeof to);
    const double quiet_ms = quiet < 0 ? -1.0 : static_cast<double>(quiet) / 1e6;
    std::fprintf(stderr, "delay_relay %s: holding: a large TCP segment out to %s after %.1f ms without one; "
                 "nothing comes in from now on\n", options_.tun.c_str(), to, quiet_ms);
    std::fflush(stderr);
  }

  bool holding() {
    if (!hold_started_) return false;
    if (hold_signals < 2) return true;
    if (!hold_released_) {
      hold_released_ = true;
      std::fprintf(stderr, "delay_relay %s: released after dropping %llu datagrams toward this facility\n",
                   options_.tun.c_str(), counters_.held_in);
      std::fflush(stderr);
    }
    return false;
  }

  static bool is_large_segment(const unsigned char *packet, size_t size) {
    if (size < 20 + 20 + kFlipMinPayload || (packet[0] >> 4) != 4 || packet[9] != 6) return false;
    const size_t ip_header = static_cast<size_t>(packet[0] & 0x0f) * 4;
    const size_t total = static_cast<size_t>(packet[2] << 8 | packet[3]);
    if (total > size || ip_header + 20 > total) return false;
    const size_t tcp_header = static_cast<size_t>(packet[ip_header + 12] >> 4) * 4;
    return total - ip_header >= tcp_header + kFlipMinPayload;
  }

  long long large_segments_ = 0;
  long long last_large_out_ns_ = -1;
  bool hold_started_ = false, hold_released_ = false;
  Options options_;
  Fd tun_;
  Fd udp_;
  std::vector<unsigned char> buffer_;
  std::deque<HeldPacket> held_;
  size_t held_bytes_ = 0;
  bool blocked_on_send_ = false;
  Counters counters_;
};

}  // namespace

int main(int argc, char **argv) {
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const std::exception &error) {
    std::fprintf(stderr,
                 "delay_relay: %s\nusage: delay_relay --tun NAME --local ADDR:PORT (--peer ADDR:PORT | "
                 "--route SUBNET/LEN=ADDR:PORT ...) --delay-ms D [--ready FILE] [--flip-segment N [--flip-incoming] "
                 "[--flip-after-usr1]] [--hold-after-usr2 QUIET_MS]\n",
                 error.what());
    return 2;
  }
  struct sigaction action{};
  action.sa_handler = request_stop;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  if (options.flip_after_usr1) {
    flip_armed = 0;
    struct sigaction arm{};
    arm.sa_handler = arm_flip;
    sigaction(SIGUSR1, &arm, nullptr);
  }
  if (options.hold_quiet_ns >= 0) {
    struct sigaction hold{};
    hold.sa_handler = count_hold_signal;
    sigaction(SIGUSR2, &hold, nullptr);
  }

  Relay relay(options);
  if (!options.ready_file.empty()) {
    FILE *ready = std::fopen(options.ready_file.c_str(), "w");
    if (!ready) die("create " + options.ready_file);
    std::fclose(ready);
  }
  relay.run();
  const Counters &c = relay.counters();
  std::fprintf(stderr,
               "delay_relay %s: forwarded %llu, delivered %llu, dropped: queue full %llu, send failed %llu, "
               "write failed %llu, flipped %llu, held %llu\n",
               options.tun.c_str(), c.forwarded, c.delivered, c.dropped_full, c.dropped_send, c.dropped_write,
               c.flipped, c.held_in);
  return 0;
}
