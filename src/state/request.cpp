// The request's thread and its end: see request.h.
#include "state/request.h"

#include <new>
#include <system_error>
#include <utility>

#include "common/error.h"

namespace xffl {

Request::Request(std::shared_ptr<CallGate> gate, CallGate::RequestHold hold, const char *call,
                 std::function<void()> work)
    : gate_(std::move(gate)), hold_(std::move(hold)), call_(call) {
  try {
    thread_ = std::thread(&Request::run, this, std::move(work));
  } catch (const std::system_error &error) {
    fail(XFFL_ENOMEM, "no thread could be started for the request of ", call, ": ", error.what());
  }
}

Request::~Request() {
  finish_run();
  join_and_release();
}

void Request::run(std::function<void()> work) noexcept {
  xffl_status_t status = XFFL_OK;
  std::string message;
  try {
    work();
  } catch (const Error &error) {
    status = error.status();
    message = error.what();
  } catch (const std::bad_alloc &) {
    status = XFFL_ENOMEM;
    message = "out of memory";
  } catch (const std::exception &error) {
    status = XFFL_EINTERNAL;
    message = std::string("internal error: ") + error.what();
  } catch (...) {
    status = XFFL_EINTERNAL;
    message = "internal error: unknown exception";
  }
  work = nullptr;  // its captures end here, on the request's thread, before the end is announced
  std::lock_guard<std::mutex> lock(mutex_);
  status_ = status;
  message_ = std::move(message);
  done_ = true;
  ended_.notify_all();
}

void Request::finish_run() {
  std::unique_lock<std::mutex> lock(mutex_);
  ended_.wait(lock, [this] { return done_; });
}

void Request::join_and_release() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (joined_) return;
  if (thread_.joinable()) thread_.join();  // it has announced its end: returns at once
  joined_ = true;
  hold_.release();
}

bool Request::test() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!done_) return false;
  }
  join_and_release();
  return true;
}

void Request::wait() {
  finish_run();
  join_and_release();
}

}  // namespace xffl
