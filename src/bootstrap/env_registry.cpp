#include "bootstrap/env_registry.h"

#include <algorithm>

#include "bootstrap/wire.h"
#include "comm/backend_names.h"
#include "xffl/types.h"

namespace xffl::bootstrap::registry {

namespace {

// The named kinds, or with none named every backend that may be the main one.
std::vector<Choice> backends(std::initializer_list<xffl_backend_t> kinds) {
  std::vector<Choice> choices;
  for (const comm::BackendName &entry : comm::backend_names())
    if (kinds.size() == 0 ? entry.main : std::find(kinds.begin(), kinds.end(), entry.kind) != kinds.end())
      choices.push_back({entry.name, entry.kind, true});
  return choices;
}

std::vector<Variable> make_table() {
  const Type count = Type::Count, port = Type::Port, seconds = Type::Seconds, list = Type::CountList,
             choice = Type::Choice, flag = Type::Flag, text = Type::Text;
  // id, name, type, default value, default in words, minimum, choices, fallbacks, max length, doc.
  return {
      {Var::Rank, "XFFL_RANK", count, nullptr, "the launcher's", 0, {}, {}, 0,
       "Global rank of this process; replaces the launcher's (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK)."},
      {Var::WorldSize, "XFFL_WORLD_SIZE", count, nullptr, "the launcher's", 1, {}, {}, 0,
       "Number of processes in the job; replaces the launcher's."},
      {Var::LocalRank, "XFFL_LOCAL_RANK", count, nullptr, "the launcher's", 0, {}, {}, 0,
       "Rank of this process on its node; chooses the device."},
      {Var::LocalWorldSize, "XFFL_LOCAL_WORLD_SIZE", count, nullptr, "the launcher's", 1, {}, {}, 0,
       "Processes on this node."},
      {Var::NodeRank, "XFFL_NODE_RANK", count, nullptr, "the launcher's", 0, {}, {}, 0, "Index of this node."},
      {Var::NodeWorldSize, "XFFL_NODE_WORLD_SIZE", count, nullptr, "the launcher's", 1, {}, {}, 0,
       "Number of nodes."},
      {Var::MasterAddr, "XFFL_MASTER_ADDR", text, nullptr, "MASTER_ADDR, else the first SLURM node", 0, {}, {}, 0,
       "Host of rank 0, where the rendezvous store runs."},
      {Var::MasterPort, "XFFL_MASTER_PORT", port, nullptr, "MASTER_PORT, else 29500 (SLURM, Open MPI)", 0, {}, {}, 0,
       "Port of the rendezvous store."},
      {Var::Federated, "XFFL_FEDERATED", list, nullptr, "none: no federated scaling", 0, {}, {}, 0,
       "Federated group sizes in processes (4,8); one value F makes W/F equal groups."},
      {Var::FederatedLocalWorldSize, "XFFL_FEDERATED_LOCAL_WORLD_SIZE", list, nullptr, "none: no federated scaling", 0,
       {}, {}, 0, "Federated group sizes in nodes, as xFFL's Python reads them; one value makes equal groups."},
      {Var::Hsdp, "XFFL_HSDP", count, nullptr, "none: FSDP", 1, {}, {}, 0,
       "HSDP replica size S (ranks per replica)."},
      {Var::Backend, "XFFL_BACKEND", choice, "ucx", nullptr, 0, backends({}), {}, 0,
       "Communication backend of xffl_state_from_env."},
      {Var::Device, "XFFL_DEVICE", choice, "cpu", nullptr, 0,
       {{"cpu", XFFL_DEVICE_CPU, true}, {"cuda", XFFL_DEVICE_CUDA, true}}, {}, 0,
       "Execution device of xffl_state_from_env (cuda needs XFFL_BACKEND=nccl)."},
      {Var::Streams, "XFFL_STREAMS", count, "1", nullptr, 1, {}, {}, 0,
       "Instances K of the FEDERATED and REPLICA groups, one per stream."},
      {Var::Timeout, "XFFL_TIMEOUT", seconds, "300", nullptr, 0, {}, {}, 0,
       "Bound on every wait, in seconds (XFFL_OPT_TIMEOUT_MS)."},
      {Var::LogLevel, "XFFL_LOG_LEVEL", choice, "warn", nullptr, 0,
       {{"error", XFFL_LOG_ERROR, true},
        {"warn", XFFL_LOG_WARN, true},
        {"info", XFFL_LOG_INFO, true},
        {"debug", XFFL_LOG_DEBUG, true},
        {"warning", XFFL_LOG_WARN, false}},
       {}, 0, "Lines the library writes to stderr; info shows how long bring-up took (XFFL_OPT_LOG_LEVEL)."},
      {Var::JobId, "XFFL_JOB_ID", text, "xffl", nullptr, 0, {}, {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID"},
       wire::kMaxJobId,
       "Name every rank of a job shares; keeps two jobs on one port apart (XFFL_OPT_JOB_ID)."},
      {Var::AuthToken, "XFFL_AUTH_TOKEN", text, nullptr, "none: no authentication", 0, {}, {}, 0,
       "Shared secret of the rendezvous (HMAC challenge-response, never sent; XFFL_OPT_AUTH_TOKEN)."},
      {Var::CrossFacilityBackend, "XFFL_CROSS_FACILITY_BACKEND", choice, "none", nullptr, 0,
       backends({XFFL_BACKEND_NONE, XFFL_BACKEND_UCX, XFFL_BACKEND_WAN}), {}, 0,
       "ucx: groups that cross facilities go over a UCX context of their own that sends every message eagerly, "
       "device memory staged through host memory; wan: over striped, "
       "optionally encrypted TCP (XFFL_OPT_CROSS_FACILITY_BACKEND)."},
      {Var::EnqueueOnly, "XFFL_ENQUEUE_ONLY", flag, "0", nullptr, 0, {}, {}, 0,
       "NCCL: 1 returns once enqueued instead of waiting on the host (XFFL_OPT_ENQUEUE_ONLY)."},
      {Var::UcxProcessSettings, "XFFL_UCX_PROCESS_SETTINGS", flag, "0", nullptr, 0, {}, {}, 0,
       "1 lets UCX change the process: UCX_TCP_PUT_ENABLE, a log handler (XFFL_OPT_UCX_PROCESS_SETTINGS)."},
      {Var::Federation, "XFFL_FEDERATION", text, nullptr, "none: one job is the whole federation", 0, {}, {}, 0,
       "Membership store of a federation of facility jobs: etcd://[user@]h1:2379,h2:2379 or xffl://host:port "
       "(xffl-federation); the job secret XFFL_AUTH_TOKEN authenticates."},
      {Var::Facility, "XFFL_FACILITY", count, nullptr, "none: one job is the whole federation", 0, {}, {}, 0,
       "This job's facility: its index in XFFL_FEDERATED, when each facility runs its own job."},
      {Var::FederationLeaseTtl, "XFFL_FEDERATION_LEASE_TTL", seconds, nullptr,
       "XFFL_TIMEOUT / 20, within [2, 15] s, at most half XFFL_TIMEOUT (at least 1 s)", 0, {}, {}, 0,
       "A facility is alive while its lease in the membership store is renewed; it is lost this long after "
       "its last renewal (whole seconds, rounded up). Under XFFL_FACILITY_FAULTS=continue it must be shorter "
       "than XFFL_TIMEOUT (else xffl_set_global is XFFL_EINVAL)."},
      {Var::FacilityFaults, "XFFL_FACILITY_FAULTS", choice, "fail", nullptr, 0,
       {{"fail", XFFL_FACILITY_FAULTS_FAIL, true}, {"continue", XFFL_FACILITY_FAULTS_CONTINUE, true}},
       {}, 0,
       "fail: a lost facility fails the federated average everywhere; continue: in facility mode the others "
       "go on and a returning facility is healed (single-world mode: same as fail) (XFFL_OPT_FACILITY_FAULTS)."},
      {Var::FederationQuorum, "XFFL_FEDERATION_QUORUM", count, "0", nullptr, 0, {}, {}, 0,
       "Facilities needed to go on with XFFL_FACILITY_FAULTS=continue; 0 is a majority of XFFL_FEDERATED "
       "(XFFL_OPT_FEDERATION_QUORUM)."},
      {Var::FederationCa, "XFFL_FEDERATION_CA", text, nullptr, "the system's CA store", 0, {}, {}, 0,
       "etcds:// federation: PEM file of the CA that signed the etcd members' certificates."},
      {Var::FederationCert, "XFFL_FEDERATION_CERT", text, nullptr, "none: no client certificate", 0, {}, {}, 0,
       "etcds:// federation: PEM client certificate, for an etcd started with --client-cert-auth "
       "(with XFFL_FEDERATION_KEY)."},
      {Var::FederationKey, "XFFL_FEDERATION_KEY", text, nullptr, "none: no client certificate", 0, {}, {}, 0,
       "etcds:// federation: PEM private key of XFFL_FEDERATION_CERT."},
      {Var::WireFormat, "XFFL_WIRE_FORMAT", choice, "f32", nullptr, 0,
       {{"f32", XFFL_WIRE_F32, true},
        {"bf16", XFFL_WIRE_BF16, true},
        {"f16", XFFL_WIRE_F16, true},
        {"int8_block", XFFL_WIRE_INT8_BLOCK, true},
        {"int4_block", XFFL_WIRE_INT4_BLOCK, true}},
       {}, 0, "How federated averages write f32 data between facilities; f32 is exact (XFFL_OPT_WIRE_FORMAT)."},
      {Var::ErrorFeedback, "XFFL_ERROR_FEEDBACK", flag, "0", nullptr, 0, {}, {}, 0,
       "1 carries each buffer's quantisation residual into its next federated average (XFFL_OPT_ERROR_FEEDBACK)."},
      {Var::WanStreams, "XFFL_WAN_STREAMS", count, "4", nullptr, 1, {}, {}, 0,
       "wan crossing backend: TCP streams per pair of members, at most 64 (XFFL_OPT_WAN_STREAMS)."},
      {Var::WanEncryption, "XFFL_WAN_ENCRYPTION", choice, "none", nullptr, 0,
       {{"none", XFFL_WAN_ENCRYPTION_NONE, true},
        {"aes-256-gcm", XFFL_WAN_ENCRYPTION_AES_256_GCM, true},
        {"chacha20-poly1305", XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305, true}},
       {}, 0, "wan crossing backend: encryption in transit; needs XFFL_AUTH_TOKEN (XFFL_OPT_WAN_ENCRYPTION)."},
      {Var::WanBdp, "XFFL_WAN_BDP", count, "0", nullptr, 0, {}, {}, 0,
       "wan crossing backend: the link's bandwidth-delay product in bytes; sizes each stream's socket "
       "buffers (BDP / streams), and a crossing keeps twice it in flight when that is over 32 MiB; 0 keeps "
       "the kernel's autotuning."},
      {Var::WanDialOut, "XFFL_WAN_DIAL_OUT", flag, "0", nullptr, 0, {}, {}, 0,
       "wan crossing backend: 1 accepts no connection from other facilities and dials every peer instead "
       "(a facility whose firewall passes only outbound connections); two such facilities meet only through "
       "a relay (XFFL_WAN_RELAY)."},
      {Var::WanRelay, "XFFL_WAN_RELAY", text, nullptr, "none: no relay", 0, {}, {}, 0,
       "wan crossing backend: HOST:PORT of this facility's xffl-relay; its ranks accept no connection, and "
       "a peer that cannot accept either meets them there (the relay forwards the encrypted streams)."},
  };
}

std::string join(const std::vector<std::string> &parts, const char *separator) {
  std::string out;
  for (const std::string &part : parts) out += (out.empty() ? "" : separator) + part;
  return out;
}

}  // namespace

const std::vector<Variable> &variables() {
  static const std::vector<Variable> table = make_table();
  return table;
}

const Variable &variable(Var id) { return variables().at(static_cast<size_t>(id)); }

const char *name(Var id) { return variable(id).name; }

const char *type_name(Type type) {
  switch (type) {
    case Type::Count: return "integer";
    case Type::Port: return "port";
    case Type::Seconds: return "seconds";
    case Type::CountList: return "list";
    case Type::Choice: return "choice";
    case Type::Flag: return "flag";
    case Type::Text: return "text";
  }
  return "unknown";
}

std::string values_text(const Variable &v) {
  switch (v.type) {
    case Type::Count: return ">= " + std::to_string(v.minimum);
    case Type::Port: return "1 to 65535";
    case Type::Seconds: return "(0, 2147483]";
    case Type::CountList: return "positive integers, comma-separated";
    case Type::Flag: return "0 or 1";
    case Type::Text: return v.max_length ? "at most " + std::to_string(v.max_length) + " bytes" : "any";
    case Type::Choice: {
      std::vector<std::string> names;
      for (const Choice &c : v.choices)
        if (c.listed) names.emplace_back(c.name);
      return join(names, ", ");
    }
  }
  return "";
}

std::string default_text(const Variable &v) {
  std::string out = v.default_value ? v.default_value : v.unset;
  if (!v.fallbacks.empty()) {
    std::vector<std::string> names(v.fallbacks.begin(), v.fallbacks.end());
    out = join(names, ", else ") + ", else " + out;
  }
  return out;
}

std::string help_table() {
  std::string out = "Environment variables xffl reads (empty counts as unset):\n";
  for (const Variable &v : variables()) {
    out += "\n  " + std::string(v.name) + "  " + type_name(v.type) + ": " + values_text(v) + "\n";
    out += "      " + std::string(v.doc) + "\n";
    out += "      default: " + default_text(v) + "\n";
  }
  return out;
}

std::string markdown_table() {
  std::string out = "| variable | type | values | default | what it does |\n|---|---|---|---|---|\n";
  for (const Variable &v : variables())
    out += "| `" + std::string(v.name) + "` | " + type_name(v.type) + " | " + values_text(v) + " | " + default_text(v) +
           " | " + v.doc + " |\n";
  return out;
}

}  // namespace xffl::bootstrap::registry
