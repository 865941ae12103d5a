// A fake backend, added the way any backend is: its line in the table of backends
// (xffl::comm::register_backend, one line in the test) and its maker. It says it moves device memory
// and needs a stream on every collective (NULL is refused), under a kind that is not NCCL's: the
// state can only get that right by asking its virtual methods. Its thread-ranks meet in-process
// (fake_fabric.h); every capability call is written in the rank's journal.
#ifndef XFFL_TESTS_UNIT_FAKE_BACKEND_FAKE_BACKEND_H
#define XFFL_TESTS_UNIT_FAKE_BACKEND_FAKE_BACKEND_H

#include <string>
#include <vector>

#include "comm/backend_table.h"

namespace fake {

// Outside the public enum on purpose: no code may infer anything from it.
constexpr xffl_backend_t kFakeBackend = static_cast<xffl_backend_t>(42);
// Devices this fake pretends each node has.
constexpr int kDevices = 4;

extern const xffl::comm::BackendMaker kFakeMaker;

// What rank `rank`'s backends were asked, in order ("select_device -1 1 2", "apply timeout 15000").
std::vector<std::string> journal(int rank);

}  // namespace fake

#endif
