// A shared library that xffl loads at run time instead of linking (UCX, PMIx, libcurl): a process
// that never uses it neither needs it installed nor pays for loading it. The three share the same
// steps, kept here once: open the library on first use (the first of a few sonames that loads),
// resolve the functions xffl calls by name into a table of function pointers, and remember a
// failure so that every later caller gets the same error instead of a second attempt. What each
// library says when it is missing or lacks a function stays with that library (its own messages
// name the package to install and the version it needs).
//
// A library is opened RTLD_NOW (one missing a symbol it needs fails at load, not in the middle of a
// call) and RTLD_LOCAL (none of its symbols becomes visible to the host's lookups), and never closed:
// each of them has constructors, threads or global state that outlive their last use.
#ifndef XFFL_SRC_COMMON_LAZY_LIBRARY_H
#define XFFL_SRC_COMMON_LAZY_LIBRARY_H

#include <atomic>
#include <initializer_list>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "common/error.h"

namespace xffl {

// Opens the first of `sonames` that the dynamic loader finds, in order. Returns its handle, or
// nullptr when none loads; then `reason` holds the loader's words (each name's, "; "-separated, when
// several were tried).
void *open_library(std::initializer_list<const char *> sonames, std::string &reason);

// The address of `name` in `handle`, or nullptr with the loader's words in `reason`.
void *find_symbol(void *handle, const char *name, std::string &reason);

// Resolves function pointers by name from one opened library into a table. `missing(name, reason)`
// reports a symbol the library lacks: it must throw (xffl::fail), with the library's own words.
template <class Missing>
class SymbolResolver {
 public:
  SymbolResolver(void *handle, Missing missing) : handle_(handle), missing_(std::move(missing)) {}

  template <class Function>
  void operator()(const char *name, Function &slot) const {
    std::string reason;
    void *symbol = find_symbol(handle_, name, reason);
    if (!symbol) missing_(name, reason);
    slot = reinterpret_cast<Function>(symbol);
  }

 private:
  void *handle_;
  Missing missing_;
};

// Resolves the table's member `name` from the symbol of the same name: one line per function.
#define XFFL_RESOLVE_SYMBOL(resolver, table, name) (resolver)(#name, (table).name)

// Calls Open once per process (std::call_once) and returns its table to every caller. When Open
// throws xffl::Error, that error (status and message) is kept and thrown again to every later
// caller: a library that failed to load is not tried again. Every static here is trivially
// destructible (the kept error is never freed), so that both stay readable until the process ends:
// a static destructor may still call through the table.
//
// The table is read on every call into the library (UCX's progress loop among them), so once it is
// loaded a caller only reads an atomic flag: libstdc++'s std::call_once sets thread-local variables
// and enters pthread_once on every call, which in a shared library is __tls_get_addr each time (14%
// of the CPU of a 4 KiB allreduce on 2 ranks went there).
template <class Table, Table (*Open)()>
const Table &load_once() {
  static_assert(std::is_trivially_destructible_v<Table>, "the table must outlive every static destructor");
  static std::once_flag once;
  static Table table{};
  static const Error *failure = nullptr;
  static std::atomic<bool> settled{false};  // set after call_once returned: table or failure is final
  if (!settled.load(std::memory_order_acquire)) {
    std::call_once(once, [] {
      try {
        table = Open();
      } catch (const Error &error) {
        failure = new Error(error);
      }
    });
    settled.store(true, std::memory_order_release);
  }
  if (failure) throw *failure;
  return table;
}

}  // namespace xffl

#endif
