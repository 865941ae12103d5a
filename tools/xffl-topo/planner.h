// Plans ranks through the public C API exactly as a training process would (xffl_state_create,
// xffl_set_global with XFFL_BACKEND_NONE, xffl_set_node, xffl_set_exec_device, the layout), and gathers
// the whole world into a World for the table and the pictures.
#ifndef XFFL_TOOLS_TOPO_PLANNER_H
#define XFFL_TOOLS_TOPO_PLANNER_H

#include <memory>
#include <stdexcept>
#include <string>

#include <xffl.h>

#include "cli.h"
#include "world.h"

namespace xffl_topo {

// The library refused: the message is xffl_last_error_message() of the failing call.
class LibraryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StateDeleter {
  void operator()(xffl_state_t *st) const { xffl_state_destroy(st); }
};
using StateHandle = std::unique_ptr<xffl_state_t, StateDeleter>;

// One rank's state, fully configured by the options. Throws LibraryError.
StateHandle plan_rank(const Options &options, int rank);

// xffl_state_describe of a planned state.
std::string describe(const xffl_state_t *st, xffl_format_t format);

// Every rank of the world: fields, groups (each distinct group fetched once) and facility meshes.
// Cost O(W + G) per rank's plan plus O(W) for all groups together. Throws LibraryError.
World plan_world(const Options &options);

}  // namespace xffl_topo

#endif
