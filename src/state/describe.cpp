// DistributedState::describe: the text of xFFL's __str__ and a JSON object with the same fields.
#include <optional>
#include <sstream>
#include <string>

#include "comm/backend_names.h"
#include "common/error.h"
#include "common/format.h"
#include "state/distributed_state.h"

namespace xffl {

namespace {

const char *device_name(int device) {
  switch (device) {
    case XFFL_DEVICE_CPU: return "cpu";
    case XFFL_DEVICE_CUDA: return "cuda";
    case XFFL_DEVICE_META: return "meta";
  }
  return "unknown";
}

// One field's value in both notations: Python str() and JSON.
struct Value {
  std::string python = "None";
  std::string json = "null";
};

Value integer(std::optional<int> v) {
  if (!v) return {};
  return {std::to_string(*v), std::to_string(*v)};
}

Value boolean(std::optional<bool> v) {
  if (!v) return {};
  return {*v ? "True" : "False", *v ? "true" : "false"};
}

Value string(const char *text) {
  if (!text) return {};
  return {text, std::string("\"") + text + "\""};
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

Value tuple(const std::vector<int> *v) {
  if (!v) return {};
  return {python_tuple(*v), python_list(*v)};
}

Value rank_list(const std::optional<topology::RankList> &list) {
  if (!list) return {};
  std::string text = python_list(list->to_vector());
  return {text, text};
}

// torch's DeviceMesh repr; JSON as nested lists.
Value mesh_value(const std::optional<topology::Mesh> &m, const char *device) {
  if (!m) return {};
  std::string grid;
  if (m->shape.size() == 1) {
    grid = python_list(m->ranks().to_vector());
  } else {
    grid = "[";
    for (int row = 0; row < m->shape[0]; ++row) {
      if (row) grid += ", ";
      grid += python_list(topology::RankList::progression(m->first_rank + row * m->shape[1], 1, m->shape[1]).to_vector());
    }
    grid += "]";
  }
  const char *names = m->shape.size() == 1 ? "('shard',)" : "('replica', 'shard')";
  return {std::string("DeviceMesh('") + device + "', " + grid + ", mesh_dim_names=" + names + ")", grid};
}

struct Field {
  const char *label;  // text label including its tabs
  const char *key;    // DistributedState field name
  Value value;
};

}  // namespace

std::string DistributedState::describe(xffl_format_t format) const {
  if (format != XFFL_FORMAT_TEXT && format != XFFL_FORMAT_JSON)
    fail(XFFL_EINVAL, "unknown format ", static_cast<int>(format), " (XFFL_FORMAT_TEXT or XFFL_FORMAT_JSON)");
  const bool global = is_global_setup();
  const topology::RankPlan *p = plan_ ? &*plan_ : nullptr;
  const char *device = device_name(device_type_);
  auto opt = [&](bool set, int v) { return set ? std::optional<int>(v) : std::nullopt; };
  auto plan_int = [&](std::optional<int> topology::RankPlan::*f) { return p ? p->*f : std::nullopt; };
  auto plan_group = [&](std::optional<topology::RankList> topology::RankPlan::*f) {
    return p ? p->*f : std::nullopt;
  };

  Value addr = global ? Value{master_addr_, json_escape(master_addr_)} : Value{};
  Value current = current_device_ ? (device_type_ == XFFL_DEVICE_CPU ? string("cpu") : integer(current_device_)) : Value{};

  struct Section {
    const char *name;
    std::vector<Field> fields;
  };
  const std::vector<Section> sections = {
      {"GLOBAL",
       {{"Backend\t\t\t", "backend", global ? string(comm::backend_name(backend_kind_)) : Value{}},
        {"Master address\t\t", "master_addr", addr},
        {"Master port\t\t\t", "master_port", integer(opt(global, master_port_))},
        {"Rank\t\t\t", "rank", integer(opt(global, rank_))},
        {"World size\t\t\t", "world_size", integer(opt(global, world_size_))}}},
      {"NODE",
       {{"Node local rank\t\t", "node_local_rank", integer(opt(node_.has_value(), node_ ? node_->local_rank : 0))},
        {"Node local size\t\t", "node_local_size", integer(opt(node_.has_value(), node_ ? node_->local_size : 0))},
        {"Node rank\t\t\t", "node_rank", integer(opt(node_.has_value(), node_ ? node_->rank : 0))},
        {"Node world size\t\t", "node_world_size", integer(opt(node_.has_value(), node_ ? node_->world_size : 0))}}},
      {"REPLICA",
       {{"Replica local rank\t\t", "replica_local_rank", integer(plan_int(&topology::RankPlan::replica_local_rank))},
        {"Replica local size\t\t", "replica_local_size", integer(plan_int(&topology::RankPlan::replica_local_size))},
        {"Replica rank\t\t", "replica_rank", integer(plan_int(&topology::RankPlan::replica_rank))},
        {"Replica world size\t\t", "replica_world_size",
         tuple(p && !p->replica_world_size.empty() ? &p->replica_world_size : nullptr)}}},
      {"FEDERATION",
       {{"Federated local rank\t", "federated_local_rank", integer(plan_int(&topology::RankPlan::federated_local_rank))},
        {"Federated local size\t", "federated_local_size",
         tuple(p && p->federated_local_size ? p->federated_local_size.get() : nullptr)},
        {"Federated rank\t\t", "federated_rank", integer(plan_int(&topology::RankPlan::federated_rank))},
        {"Federated world size\t", "federated_world_size", integer(plan_int(&topology::RankPlan::federated_world_size))}}},
      {"MESHES",
       {{"FSDP\t\t\t", "fsdp_mesh", mesh_value(p ? p->fsdp_mesh : std::nullopt, device)},
        {"HSDP\t\t\t", "hsdp_mesh", mesh_value(p ? p->hsdp_mesh : std::nullopt, device)},
        {"Is sender\t\t\t", "is_sender", boolean(p ? p->is_sender : std::nullopt)},
        {"Receives from\t\t", "receive_from", integer(plan_int(&topology::RankPlan::receive_from))},
        {"Federated group\t\t", "federated_group", rank_list(plan_group(&topology::RankPlan::federated_group))},
        {"Replica group\t\t", "replica_group", rank_list(plan_group(&topology::RankPlan::replica_group))},
        {"Federation\t\t\t", "federation", rank_list(plan_group(&topology::RankPlan::federation))}}},
      {"DEVICE",
       {{"Device type\t\t\t", "device_type", global ? string(device) : Value{}},
        {"Device count\t\t\t", "device_count", integer(opt(global, device_count_))},
        {"Current device\t\t", "current_device", current},
        {"Initialization device\t", "init_device", init_device_ ? string(device_name(*init_device_)) : Value{}},
        {"Meta initialization\t\t", "meta_initialization", boolean(meta_initialization_)},
        {"Streams\t\t\t", "streams", integer(opt(global, streams_))}}},
  };

  std::ostringstream out;
  if (format == XFFL_FORMAT_JSON) {
    out << "{";
    bool first = true;
    for (const auto &section : sections)
      for (const auto &field : section.fields) {
        out << (first ? "" : ", ") << "\"" << field.key << "\": " << field.value.json;
        first = false;
      }
    out << "}";
    return out.str();
  }
  const std::string banner = std::string(16, ' ') + "*** xFFL Distributed Setup ***";
  out << "\n\n" << banner << "\n\n";
  for (const auto &section : sections) {
    std::string header = std::string(section.name) + " ";
    header += std::string(57 - header.size(), '-');
    out << std::string(8, ' ') << header << "\n";
    for (const auto &field : section.fields) out << std::string(20, ' ') << field.label << field.value.python << "\n";
  }
  out << "\n" << banner << "\n" << std::string(16, ' ');
  return out.str();
}

}  // namespace xffl
