// The one table of the state's fields (xFFL's DistributedState attributes). Each row holds a field's
// name, how to read it from a state and, through the value it reads, both printed forms (Python str()
// and JSON). xffl_get_int, xffl_get_ints, the messages of xffl_get_mesh and both formats of
// xffl_state_describe (which xffl-topo --format json prints) all read this table, so a new field is
// one row here (plus its XFFL_ATTR_ value in include/xffl/types.h when C reads it).
#ifndef XFFL_SRC_STATE_FIELDS_H
#define XFFL_SRC_STATE_FIELDS_H

#include <optional>
#include <string>
#include <vector>

#include "topology/plan.h"
#include "xffl/types.h"

namespace xffl {

struct NodeInfo;

namespace fields {

// What the rows read: one state as plain values, made by DistributedState::field_source(). The
// pointers live as long as that state is unchanged.
struct Source {
  bool global = false;  // xffl_set_global was called
  xffl_backend_t backend = XFFL_BACKEND_NONE;
  xffl_device_t device_type = XFFL_DEVICE_CPU;
  const std::string *master_addr = nullptr;
  int master_port = 0, rank = 0, world_size = 0;
  const NodeInfo *node = nullptr;            // null until xffl_set_node
  const topology::RankPlan *plan = nullptr;  // null without a layout
  std::optional<int> current_device;
  int device_count = 0;
  int streams = 1;
  std::optional<xffl_device_t> init_device;
  std::optional<bool> meta_initialization;
  // Under federated scaling: the federation's progress (not fields of xFFL, never printed).
  std::optional<int> federation_epoch, federation_round;
  const std::vector<int> *live_facilities = nullptr;
};

// One field's value. None is Python's None (JSON null, XFFL_ENOTSET from the getters).
struct Value {
  enum class Kind { None, Int, Bool, Text, Tuple, Ranks, Mesh };
  Kind kind = Kind::None;
  int number = 0;              // Int; Bool as 0 or 1; Text: the enum value xffl_get_int returns
  std::string text;            // Text: the printed text; Mesh: the device name of torch's repr
  std::vector<int> ints;       // Tuple, Ranks
  const topology::Mesh *mesh = nullptr;

  std::string python() const;  // "None", "True", "(4, 8)", "DeviceMesh('cpu', [0, 1], ...)"
  std::string json() const;    // "null", "true", "[4, 8]", "[0, 1]"
};

struct Field {
  const char *name;     // the attribute's name in xFFL: JSON key and the name in messages
  const char *section;  // the describe() section it is printed in; nullptr: not printed
  const char *label;    // its describe() text label, tabs included
  std::optional<xffl_attr_t> attr;       // read by xffl_get_int (xffl_get_ints when tuple)
  std::optional<xffl_mesh_kind_t> mesh;  // read by xffl_get_mesh
  bool tuple;                            // a tuple: xffl_get_ints only
  Value (*read)(const Source &);
};

// Every field, in describe() order (xFFL's __str__); fields that are not printed come last.
const std::vector<Field> &table();

// The row of an attribute or a mesh; nullptr for a value outside the enum.
const Field *find(xffl_attr_t attr);
const Field *find(xffl_mesh_kind_t mesh);

// xffl_get_int: XFFL_EINVAL for an unknown attribute or a tuple, XFFL_ENOTSET while it is None.
int get_int(const Source &source, xffl_attr_t attr);
// xffl_get_ints: a tuple's entries, or a scalar as one entry; errors as get_int.
std::vector<int> get_ints(const Source &source, xffl_attr_t attr);

}  // namespace fields
}  // namespace xffl

#endif
