#include "bootstrap/name_lookup.h"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace xffl::bootstrap::net {

// Why a detached thread running plain getaddrinfo, not glibc's getaddrinfo_a + gai_suspend:
//  - getaddrinfo_a runs the lookup on glibc's own helper threads all the same, so it saves no thread;
//  - a request already in progress cannot be cancelled (gai_cancel: EAI_NOTCANCELED), and its gaicb,
//    name and hints must live until it ends: freeing them then needs a completion notification
//    (SIGEV_THREAD, one more thread) or a leak per abandoned lookup;
//  - glibc makes those threads internally, unseen by ThreadSanitizer, which then reports the hand-over
//    of the result as a race; std::thread, std::mutex and std::condition_variable it understands;
//  - it is glibc's alone.
// Here the inputs and the result live in one Pending shared by the caller and the worker: a caller that
// gives up at its deadline just lets go, and the worker frees the result whenever the resolver ends.
// Lookups are rare (the rendezvous, a connect's retries, one per address of a daemon), and each caller
// waits for its own, so abandoned workers do not pile up.
//
// Fork safety: the only lock of ours the worker takes is its own Pending's mutex, which nothing else
// shares and which a child of fork() never touches (the child has no worker and no waiter: the thread
// that forks is not the one waiting, which is blocked). Inside getaddrinfo glibc holds its locks
// (malloc's arenas, the NSS configuration, resolv.conf's) only for moments and resets malloc's and NSS's
// in the child of fork(); while it waits for a DNS server it sits in poll() holding none, so a child
// forked then (a training script's data-loader workers) finds them free.
//
// Signals: the worker starts with every signal blocked, so the program's handlers never run on it
// and a process-directed signal (SIGINT, SIGTERM) goes to one of the program's own threads.
//
// A worker still running at exit() is harmless: it touches only its Pending and libc. Its code lives in
// this library, so a program must not dlclose() libxffl while a lookup it gave up on still runs.

namespace {

struct Pending {
  std::string host;
  std::string service;
  addrinfo hints{};
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  int rc = 0;
  int error = 0;
  AddrinfoList list;
};

void work(Pending &pending) {
  pthread_setname_np(pthread_self(), "xffl-lookup");  // in stacks (gdb, /proc/PID/task/*/comm), and for the tests
  addrinfo *found = nullptr;
  const int rc = ::getaddrinfo(pending.host.c_str(), pending.service.c_str(), &pending.hints, &found);
  const int error = errno;  // thread-local: read here, on the thread that looked up
  AddrinfoList list(found);
  std::lock_guard<std::mutex> lock(pending.mutex);
  pending.rc = rc;
  pending.error = error;
  pending.list = std::move(list);
  pending.done = true;
  pending.finished.notify_one();
}

// Starts the worker with every signal blocked; 0, or the errno of a thread that could not start.
int start_worker(const std::shared_ptr<Pending> &pending) {
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  int error = 0;
  try {
    std::thread([pending] { work(*pending); }).detach();
  } catch (const std::system_error &failure) {
    error = failure.code().value();
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return error;
}

NameLookup finished(int rc, int error, addrinfo *found) {
  NameLookup out;
  out.list.reset(found);
  if (rc != 0) {
    out.kind = NameLookup::Failed;
    out.rc = rc;
    out.error = error;
    out.list.reset();
  }
  return out;
}

}  // namespace

NameLookup lookup_name(const std::string &host, const std::string &service, const addrinfo &hints,
                       std::chrono::steady_clock::time_point deadline) {
  // A numeric address, or no host at all, asks no server: looked up inline, no thread.
  const char *node = host.empty() ? nullptr : host.c_str();
  addrinfo numeric = hints;
  numeric.ai_flags |= AI_NUMERICHOST;
  addrinfo *found = nullptr;
  const int rc = ::getaddrinfo(node, service.c_str(), &numeric, &found);
  const int error = errno;
  if (rc != EAI_NONAME || !node || (hints.ai_flags & AI_NUMERICHOST)) return finished(rc, error, found);

  NameLookup out;
  if (std::chrono::steady_clock::now() >= deadline) {
    out.kind = NameLookup::Timeout;
    return out;
  }
  auto pending = std::make_shared<Pending>();
  pending->host = host;
  pending->service = service;
  pending->hints = hints;
  if (const int failed = start_worker(pending)) return finished(EAI_SYSTEM, failed, nullptr);
  std::unique_lock<std::mutex> lock(pending->mutex);
  if (!pending->finished.wait_until(lock, deadline, [&] { return pending->done; })) {
    out.kind = NameLookup::Timeout;
    return out;  // the worker, the last owner of `pending`, frees what it finds
  }
  return finished(pending->rc, pending->error, pending->list.release());
}

}  // namespace xffl::bootstrap::net
