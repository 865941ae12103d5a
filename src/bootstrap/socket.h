// Thin POSIX socket helpers for the store: an owning descriptor, name resolution, and I/O that never
// waits past a deadline. Results are values (IoResult), not exceptions: the callers know the context
// (rank, store address, what was awaited) that a good error message needs.
#ifndef XFFL_SRC_BOOTSTRAP_SOCKET_H
#define XFFL_SRC_BOOTSTRAP_SOCKET_H

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xffl::bootstrap::net {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd &&other) noexcept : fd_(other.release()) {}
  Fd &operator=(Fd &&other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.release();
    }
    return *this;
  }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

struct Address {
  sockaddr_storage storage{};
  socklen_t length = 0;
  std::string text;  // numeric "host:port" for messages
};

// What a name lookup came to.
struct Resolved {
  enum Kind {
    Ok,         // `addresses` holds at least one
    Permanent,  // retrying cannot help: an unknown name, no address of the family, ...
    Temporary,  // a temporary DNS failure (EAI_AGAIN) or a system error: worth retrying
    Timeout,    // the deadline passed while the lookup still ran (a DNS server that does not answer)
  } kind = Ok;
  std::vector<Address> addresses;
  std::string error;  // Permanent, Temporary: gai_strerror's text (errno's for EAI_SYSTEM)
};

// getaddrinfo for TCP, bounded by the deadline (name_lookup.h): a host name whose lookup has not
// finished by then gives Timeout, however long glibc's resolver would still wait for its DNS servers
// (timeout x attempts x nameservers). A numeric address is converted at once, whatever the deadline; a
// name with the deadline already past is Timeout at once. An empty host is the wildcard address when
// passive.
Resolved resolve(const std::string &host, int port, bool passive, Clock::time_point deadline);

// How a caller says that a lookup timed out: "the name lookup of 'HOST' did not finish within N ms
// (BOUND); does this host reach a DNS server that answers for it?", BOUND naming what set the time
// (XFFL_TIMEOUT, ...; left out when empty).
std::string lookup_timeout_text(const std::string &host, long long timeout_ms, const std::string &bound);
// The same, bounded by the job's timeout (XFFL_TIMEOUT, named from the registry).
std::string lookup_timeout_text(const std::string &host, long long timeout_ms);

std::string errno_text(int error);
// "127.0.0.1:43122" of the other end, or "unknown peer".
std::string peer_name(int fd);
// The port a bound socket got (port 0 asked for "any").
int local_port(int fd);
void set_nonblocking(int fd);

struct IoResult {
  enum Kind { Ok, Timeout, Closed, Error } kind = Ok;
  int error = 0;      // errno for Error
  size_t bytes = 0;   // bytes moved for Ok
};

// A non-blocking connect bounded by the deadline; on success *out holds a non-blocking socket with
// TCP_NODELAY and keepalive set.
IoResult connect_until(const Address &address, Clock::time_point deadline, Fd *out);
// Sends everything or reports why not by the deadline.
IoResult send_all(int fd, const uint8_t *data, size_t size, Clock::time_point deadline);
// Receives at least one byte (up to capacity) or reports why not by the deadline.
IoResult receive_some(int fd, uint8_t *buffer, size_t capacity, Clock::time_point deadline);

}  // namespace xffl::bootstrap::net

#endif
