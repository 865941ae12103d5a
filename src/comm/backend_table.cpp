#include "comm/backend_table.h"

#include <strings.h>

#include <atomic>

#include "comm/backend_names.h"
#include "comm/local_backend.h"
#include "comm/wan/wan_backend.h"
#include "common/error.h"

// A backend that a build may lack: its maker when it is built in, else null (the line then says why).
#ifdef XFFL_HAVE_UCX
#include "comm/ucx/ucx_backend.h"
#define XFFL_UCX_MAKER &kUcxMaker
#else
#define XFFL_UCX_MAKER nullptr
#endif
#ifdef XFFL_HAVE_NCCL
#include "comm/nccl/nccl_maker.h"
#define XFFL_NCCL_MAKER &kNcclMaker
#else
#define XFFL_NCCL_MAKER nullptr
#endif

namespace xffl::comm {

namespace {

// Lines are added (register_backend) only before the table is first read; then it is fixed. Atomic:
// states on several threads read the table at once.
std::atomic<bool> table_read{false};

const char *builtin_name(xffl_backend_t kind) {
  for (const BackendName &entry : backend_names())
    if (entry.kind == kind) return entry.name;
  fail(XFFL_EINTERNAL, "backend ", static_cast<int>(kind), " has no line in backend_names.cpp");
}

std::vector<BackendEntry> &table() {
  static std::vector<BackendEntry> lines = {
      {XFFL_BACKEND_NONE, builtin_name(XFFL_BACKEND_NONE), MemoryKind::kHost, &kLocalMaker, nullptr},
      {XFFL_BACKEND_UCX, builtin_name(XFFL_BACKEND_UCX), MemoryKind::kHost, XFFL_UCX_MAKER,
       "this build of xffl has no UCX support"},
      {XFFL_BACKEND_NCCL, builtin_name(XFFL_BACKEND_NCCL), MemoryKind::kDevice, XFFL_NCCL_MAKER,
       "this build of xffl has no CUDA and NCCL support"},
      {XFFL_BACKEND_WAN, builtin_name(XFFL_BACKEND_WAN), MemoryKind::kHost, &kWanMaker, nullptr},
  };
  return lines;
}

}  // namespace

const std::vector<BackendEntry> &backend_table() {
  table_read = true;
  return table();
}

const BackendEntry *find_backend(int kind) {
  for (const BackendEntry &entry : backend_table())
    if (entry.kind == kind) return &entry;
  return nullptr;
}

const char *backend_name(int kind) {
  const BackendEntry *entry = find_backend(kind);
  return entry ? entry->name : "unknown";
}

std::optional<xffl_backend_t> backend_from_name(const std::string &name) {
  for (const BackendEntry &entry : backend_table())
    if (strcasecmp(name.c_str(), entry.name) == 0) return entry.kind;
  return std::nullopt;
}

void register_backend(const BackendEntry &entry) {
  if (!entry.name || (!entry.maker && !entry.missing))
    fail(XFFL_EINVAL, "backend ", static_cast<int>(entry.kind), ": a line needs a name, and a maker or why not");
  if (table_read)
    fail(XFFL_ESTATE, "backend '", entry.name, "' registered after the table of backends was first read");
  for (const BackendEntry &line : table())
    if (line.kind == entry.kind || strcasecmp(line.name, entry.name) == 0)
      fail(XFFL_EINVAL, "backend ", static_cast<int>(entry.kind), " '", entry.name, "': the table has backend ",
           static_cast<int>(line.kind), " '", line.name, "' already");
  table().push_back(entry);
}

}  // namespace xffl::comm
