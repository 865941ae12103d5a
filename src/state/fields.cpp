#include "state/fields.h"

#include <cstdio>

#include "comm/backend_table.h"
#include "common/error.h"
#include "common/format.h"
#include "state/distributed_state.h"

namespace xffl::fields {

namespace {

using topology::RankPlan;
using Kind = Value::Kind;

const char *device_name(int device) {
  switch (device) {
    case XFFL_DEVICE_CPU: return "cpu";
    case XFFL_DEVICE_CUDA: return "cuda";
    case XFFL_DEVICE_META: return "meta";
  }
  return "unknown";
}

std::string json_escape(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// torch's DeviceMesh repr ("DeviceMesh('cpu', [[0, 1], [2, 3]], mesh_dim_names=(...))") and its grid.
std::string mesh_grid(const topology::Mesh &m) {
  if (m.shape.size() == 1) return python_list(m.ranks().to_vector());
  std::string grid = "[";
  for (int row = 0; row < m.shape[0]; ++row) {
    if (row) grid += ", ";
    grid += python_list(topology::RankList::progression(m.first_rank + row * m.shape[1], 1, m.shape[1]).to_vector());
  }
  return grid + "]";
}

Value integer(std::optional<int> v) {
  Value out;
  if (v) {
    out.kind = Kind::Int;
    out.number = *v;
  }
  return out;
}

Value integer_if(bool set, int v) { return integer(set ? std::optional<int>(v) : std::nullopt); }

Value boolean(std::optional<bool> v) {
  Value out;
  if (v) {
    out.kind = Kind::Bool;
    out.number = *v ? 1 : 0;
  }
  return out;
}

// An enum value printed by name (backend, device): xffl_get_int gives the number, describe the name.
Value named(bool set, int number, const char *name) {
  Value out;
  if (set) {
    out.kind = Kind::Text;
    out.number = number;
    out.text = name;
  }
  return out;
}

Value text(bool set, const std::string &text) { return named(set, 0, text.c_str()); }

Value tuple(const std::vector<int> *v) {
  Value out;
  if (v) {
    out.kind = Kind::Tuple;
    out.ints = *v;
  }
  return out;
}

Value ranks(const std::optional<topology::RankList> &list) {
  Value out;
  if (list) {
    out.kind = Kind::Ranks;
    out.ints = list->to_vector();
  }
  return out;
}

Value mesh(const Source &s, const std::optional<topology::Mesh> &m) {
  Value out;
  if (m) {
    out.kind = Kind::Mesh;
    out.mesh = &*m;
    out.text = device_name(s.device_type);
  }
  return out;
}

// A field of the layout's plan: None without a layout.
template <typename T>
const T *in_plan(const Source &s, T RankPlan::*field) {
  return s.plan ? &(s.plan->*field) : nullptr;
}

Value plan_int(const Source &s, std::optional<int> RankPlan::*field) {
  const std::optional<int> *v = in_plan(s, field);
  return integer(v ? *v : std::nullopt);
}

Value plan_ranks(const Source &s, std::optional<topology::RankList> RankPlan::*field) {
  const std::optional<topology::RankList> *v = in_plan(s, field);
  return v ? ranks(*v) : Value{};
}

const std::vector<Field> &rows() {
  // name, section, text label, attribute, mesh, tuple, reader.
  static const std::vector<Field> table = {
      {"backend", "GLOBAL", "Backend\t\t\t", XFFL_ATTR_BACKEND, std::nullopt, false,
       [](const Source &s) { return named(s.global, s.backend, comm::backend_name(s.backend)); }},
      {"master_addr", "GLOBAL", "Master address\t\t", std::nullopt, std::nullopt, false,
       [](const Source &s) { return text(s.global, s.global ? *s.master_addr : std::string()); }},
      {"master_port", "GLOBAL", "Master port\t\t\t", XFFL_ATTR_MASTER_PORT, std::nullopt, false,
       [](const Source &s) { return integer_if(s.global, s.master_port); }},
      {"rank", "GLOBAL", "Rank\t\t\t", XFFL_ATTR_RANK, std::nullopt, false,
       [](const Source &s) { return integer_if(s.global, s.rank); }},
      {"world_size", "GLOBAL", "World size\t\t\t", XFFL_ATTR_WORLD_SIZE, std::nullopt, false,
       [](const Source &s) { return integer_if(s.global, s.world_size); }},

      {"node_local_rank", "NODE", "Node local rank\t\t", XFFL_ATTR_NODE_LOCAL_RANK, std::nullopt, false,
       [](const Source &s) { return integer_if(s.node, s.node ? s.node->local_rank : 0); }},
      {"node_local_size", "NODE", "Node local size\t\t", XFFL_ATTR_NODE_LOCAL_SIZE, std::nullopt, false,
       [](const Source &s) { return integer_if(s.node, s.node ? s.node->local_size : 0); }},
      {"node_rank", "NODE", "Node rank\t\t\t", XFFL_ATTR_NODE_RANK, std::nullopt, false,
       [](const Source &s) { return integer_if(s.node, s.node ? s.node->rank : 0); }},
      {"node_world_size", "NODE", "Node world size\t\t", XFFL_ATTR_NODE_WORLD_SIZE, std::nullopt, false,
       [](const Source &s) { return integer_if(s.node, s.node ? s.node->world_size : 0); }},

      {"replica_local_rank", "REPLICA", "Replica local rank\t\t", XFFL_ATTR_REPLICA_LOCAL_RANK, std::nullopt, false,
       [](const Source &s) { return plan_int(s, &RankPlan::replica_local_rank); }},
      {"replica_local_size", "REPLICA", "Replica local size\t\t", XFFL_ATTR_REPLICA_LOCAL_SIZE, std::nullopt, false,
       [](const Source &s) { return plan_int(s, &RankPlan::replica_local_size); }},
      {"replica_rank", "REPLICA", "Replica rank\t\t", XFFL_ATTR_REPLICA_RANK, std::nullopt, false,
       [](const Source &s) { return plan_int(s, &RankPlan::replica_rank); }},
      {"replica_world_size", "REPLICA", "Replica world size\t\t", XFFL_ATTR_REPLICA_WORLD_SIZE, std::nullopt, true,
       [](const Source &s) {
         const std::vector<int> *v = in_plan(s, &RankPlan::replica_world_size);
         return tuple(v && !v->empty() ? v : nullptr);
       }},

      {"federated_local_rank", "FEDERATION", "Federated local rank\t", XFFL_ATTR_FEDERATED_LOCAL_RANK, std::nullopt,
       false, [](const Source &s) { return plan_int(s, &RankPlan::federated_local_rank); }},
      {"federated_local_size", "FEDERATION", "Federated local size\t", XFFL_ATTR_FEDERATED_LOCAL_SIZE, std::nullopt,
       true, [](const Source &s) { return tuple(s.plan ? s.plan->federated_local_size.get() : nullptr); }},
      {"federated_rank", "FEDERATION", "Federated rank\t\t", XFFL_ATTR_FEDERATED_RANK, std::nullopt, false,
       [](const Source &s) { return plan_int(s, &RankPlan::federated_rank); }},
      {"federated_world_size", "FEDERATION", "Federated world size\t", XFFL_ATTR_FEDERATED_WORLD_SIZE, std::nullopt,
       false, [](const Source &s) { return plan_int(s, &RankPlan::federated_world_size); }},

      {"fsdp_mesh", "MESHES", "FSDP\t\t\t", std::nullopt, XFFL_MESH_FSDP, false,
       [](const Source &s) { return s.plan ? mesh(s, s.plan->fsdp_mesh) : Value{}; }},
      {"hsdp_mesh", "MESHES", "HSDP\t\t\t", std::nullopt, XFFL_MESH_HSDP, false,
       [](const Source &s) { return s.plan ? mesh(s, s.plan->hsdp_mesh) : Value{}; }},
      {"is_sender", "MESHES", "Is sender\t\t\t", XFFL_ATTR_IS_SENDER, std::nullopt, false,
       [](const Source &s) { return boolean(s.plan ? s.plan->is_sender : std::nullopt); }},
      {"receive_from", "MESHES", "Receives from\t\t", XFFL_ATTR_RECEIVE_FROM, std::nullopt, false,
       [](const Source &s) { return plan_int(s, &RankPlan::receive_from); }},
      {"federated_group", "MESHES", "Federated group\t\t", std::nullopt, std::nullopt, false,
       [](const Source &s) { return plan_ranks(s, &RankPlan::federated_group); }},
      {"replica_group", "MESHES", "Replica group\t\t", std::nullopt, std::nullopt, false,
       [](const Source &s) { return plan_ranks(s, &RankPlan::replica_group); }},
      {"federation", "MESHES", "Federation\t\t\t", std::nullopt, std::nullopt, false,
       [](const Source &s) { return plan_ranks(s, &RankPlan::federation); }},

      {"device_type", "DEVICE", "Device type\t\t\t", XFFL_ATTR_DEVICE_TYPE, std::nullopt, false,
       [](const Source &s) { return named(s.global, s.device_type, device_name(s.device_type)); }},
      {"device_count", "DEVICE", "Device count\t\t\t", XFFL_ATTR_DEVICE_COUNT, std::nullopt, false,
       [](const Source &s) { return integer_if(s.global, s.device_count); }},
      {"current_device", "DEVICE", "Current device\t\t", XFFL_ATTR_CURRENT_DEVICE, std::nullopt, false,
       [](const Source &s) {
         // xFFL prints the cpu execution device by name; C reads its index, 0.
         if (s.current_device && s.device_type == XFFL_DEVICE_CPU) return named(true, *s.current_device, "cpu");
         return integer(s.current_device);
       }},
      {"init_device", "DEVICE", "Initialization device\t", XFFL_ATTR_INIT_DEVICE, std::nullopt, false,
       [](const Source &s) {
         return named(s.init_device.has_value(), s.init_device.value_or(XFFL_DEVICE_CPU),
                      device_name(s.init_device.value_or(XFFL_DEVICE_CPU)));
       }},
      {"meta_initialization", "DEVICE", "Meta initialization\t\t", XFFL_ATTR_META_INITIALIZATION, std::nullopt,
       false, [](const Source &s) { return boolean(s.meta_initialization); }},
      {"streams", "DEVICE", "Streams\t\t\t", XFFL_ATTR_STREAMS, std::nullopt, false,
       [](const Source &s) { return integer_if(s.global, s.streams); }},

      // Not printed by xFFL's __str__: the replica size S of the HSDP layout.
      {"hsdp", nullptr, nullptr, XFFL_ATTR_HSDP, std::nullopt, false,
       [](const Source &s) { return integer_if(s.plan && s.plan->hsdp > 0, s.plan ? s.plan->hsdp : 0); }},
      // Not fields of xFFL's DistributedState at all (never printed, so describe() and xffl-topo match
      // xFFL's Python): the federation's progress, under federated scaling.
      {"federation_epoch", nullptr, nullptr, XFFL_ATTR_FEDERATION_EPOCH, std::nullopt, false,
       [](const Source &s) { return integer(s.federation_epoch); }},
      {"federation_round", nullptr, nullptr, XFFL_ATTR_FEDERATION_ROUND, std::nullopt, false,
       [](const Source &s) { return integer(s.federation_round); }},
      {"live_facilities", nullptr, nullptr, XFFL_ATTR_LIVE_FACILITIES, std::nullopt, true,
       [](const Source &s) { return tuple(s.live_facilities); }},
  };
  return table;
}

}  // namespace

std::string Value::python() const {
  switch (kind) {
    case Kind::None: return "None";
    case Kind::Int: return std::to_string(number);
    case Kind::Bool: return number ? "True" : "False";
    case Kind::Text: return text;
    case Kind::Tuple: return python_tuple(ints);
    case Kind::Ranks: return python_list(ints);
    case Kind::Mesh:
      return "DeviceMesh('" + text + "', " + mesh_grid(*mesh) + ", mesh_dim_names=" +
             (mesh->shape.size() == 1 ? "('shard',)" : "('replica', 'shard')") + ")";
  }
  return "None";
}

std::string Value::json() const {
  switch (kind) {
    case Kind::None: return "null";
    case Kind::Int: return std::to_string(number);
    case Kind::Bool: return number ? "true" : "false";
    case Kind::Text: return json_escape(text);
    case Kind::Tuple:
    case Kind::Ranks: return python_list(ints);
    case Kind::Mesh: return mesh_grid(*mesh);
  }
  return "null";
}

const std::vector<Field> &table() { return rows(); }

const Field *find(xffl_attr_t attr) {
  for (const Field &field : rows())
    if (field.attr == attr) return &field;
  return nullptr;
}

const Field *find(xffl_mesh_kind_t mesh) {
  for (const Field &field : rows())
    if (field.mesh == mesh) return &field;
  return nullptr;
}

namespace {

const Field &attribute(xffl_attr_t attr) {
  const Field *field = find(attr);
  if (!field) fail(XFFL_EINVAL, "unknown attribute ", static_cast<int>(attr));
  return *field;
}

}  // namespace

int get_int(const Source &source, xffl_attr_t attr) {
  const Field &field = attribute(attr);
  if (field.tuple) fail(XFFL_EINVAL, field.name, " is a tuple: read it with xffl_get_ints");
  const Value value = field.read(source);
  if (value.kind == Kind::None) fail(XFFL_ENOTSET, field.name, " is not set");
  return value.number;
}

std::vector<int> get_ints(const Source &source, xffl_attr_t attr) {
  const Field &field = attribute(attr);
  if (!field.tuple) return {get_int(source, attr)};
  Value value = field.read(source);
  if (value.kind == Kind::None) fail(XFFL_ENOTSET, field.name, " is not set");
  return std::move(value.ints);
}

}  // namespace xffl::fields
