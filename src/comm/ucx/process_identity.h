// Which process a rank is on its host (pid namespace, pid, start time), and whether that process
// still runs. UCX cannot report the death of a peer it reaches over shared memory (those endpoints
// use UCP_ERR_HANDLING_MODE_NONE, see endpoint_cache.cpp), but a process on the same host can look at
// /proc: a pid that is gone, a zombie, or a pid now used by a process that started at another time,
// all mean the peer has exited. The start time guards against pid reuse.
//
// Header-only (inline) so that comm/ucx needs no new translation unit in src/comm_ucx.cmake.
#ifndef XFFL_SRC_COMM_UCX_PROCESS_IDENTITY_H
#define XFFL_SRC_COMM_UCX_PROCESS_IDENTITY_H

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

namespace xffl::comm::ucx {

struct ProcessIdentity {
  std::string pid_namespace;  // "pid:[4026531836]"; empty when unknown
  long pid = 0;
  unsigned long long start_ticks = 0;  // /proc/<pid>/stat field 22
  // "net:[4026531840]"; empty when unknown or published by an older build. Processes of one host in
  // different network namespaces stand for different machines (the netns tests' facilities), and UCX
  // keeps them off shared memory too: the single-copy collectives need it equal (ucx_communicator.cpp).
  // Published, so that every member decides from the same bytes, not from /proc at different times.
  std::string network_namespace;

  bool known() const { return !pid_namespace.empty() && pid > 0; }
};

enum class Liveness { alive, gone, unknown };

namespace process_detail {

struct StatFields {
  bool readable = false;
  char state = 0;
  unsigned long long start_ticks = 0;
};

// /proc/<pid>/stat: "pid (comm) state ppid ... starttime(22) ...". comm may hold spaces and ')'.
inline StatFields read_stat(long pid, int *open_errno) {
  StatFields fields;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  FILE *file = std::fopen(path.c_str(), "r");
  if (!file) {
    *open_errno = errno;
    return fields;
  }
  char text[1024];
  const size_t length = std::fread(text, 1, sizeof text - 1, file);
  std::fclose(file);
  text[length] = 0;
  const char *after_comm = std::strrchr(text, ')');
  if (!after_comm) return fields;
  std::istringstream rest(after_comm + 1);
  std::string field;
  rest >> fields.state;  // field 3
  for (int index = 4; index < 22 && rest >> field; ++index) {
  }
  if (!(rest >> fields.start_ticks)) return fields;
  fields.readable = true;
  return fields;
}

inline std::string namespace_of_self(const char *link) {
  char target[PATH_MAX] = {};
  const ssize_t length = readlink(link, target, sizeof target - 1);
  return length > 0 ? std::string(target, static_cast<size_t>(length)) : std::string();
}

}  // namespace process_detail

inline ProcessIdentity this_process() {
  ProcessIdentity self;
  self.pid = static_cast<long>(getpid());
  int ignored = 0;
  const process_detail::StatFields fields = process_detail::read_stat(self.pid, &ignored);
  if (!fields.readable) return ProcessIdentity();  // no /proc: liveness stays unknown
  self.start_ticks = fields.start_ticks;
  self.pid_namespace = process_detail::namespace_of_self("/proc/self/ns/pid");
  self.network_namespace = process_detail::namespace_of_self("/proc/self/ns/net");
  return self;
}

// "<namespace> <pid> <start ticks>[ <network namespace>]", or "" for an unknown identity. A decoder
// that reads the first three fields only (an older build) ignores the fourth.
inline std::string encode_process(const ProcessIdentity &process) {
  if (!process.known()) return std::string();
  std::string text =
      process.pid_namespace + " " + std::to_string(process.pid) + " " + std::to_string(process.start_ticks);
  if (!process.network_namespace.empty()) text += " " + process.network_namespace;
  return text;
}

inline ProcessIdentity decode_process(const std::string &text) {
  ProcessIdentity process;
  std::istringstream fields(text);
  if (!(fields >> process.pid_namespace >> process.pid >> process.start_ticks) || process.pid <= 0)
    return ProcessIdentity();
  if (!(fields >> process.network_namespace)) process.network_namespace.clear();
  return process;
}

// Whether `peer` still runs, as seen from `self` on the same host (the caller checks the host).
// unknown when either identity is unknown or the pid namespaces differ (another container).
inline Liveness process_liveness(const ProcessIdentity &peer, const ProcessIdentity &self) {
  if (!peer.known() || !self.known() || peer.pid_namespace != self.pid_namespace) return Liveness::unknown;
  int open_errno = 0;
  const process_detail::StatFields fields = process_detail::read_stat(peer.pid, &open_errno);
  if (!fields.readable) return open_errno == ENOENT ? Liveness::gone : Liveness::unknown;
  if (fields.state == 'Z' || fields.state == 'X') return Liveness::gone;  // exited, not yet reaped
  if (fields.start_ticks != peer.start_ticks) return Liveness::gone;      // the pid went to another process
  return Liveness::alive;
}

}  // namespace xffl::comm::ucx

#endif
