// Every XFFL_* environment variable, declared once: name, type, default, accepted values and a line of
// doc (NCCL's NCCL_PARAM, as one table instead of one macro per variable). The readers
// (bootstrap/env_read.h) take the type, the range and the default from here; `xffl-run --help-env`
// prints this table and a test checks README.md's copy of it. A new variable is one Var value and one
// row here, then a read where it is used.
//
// The launchers' own variables (RANK, SLURM_*, OMPI_*) belong to the launchers and are read by
// bootstrap/launch_env.cpp; the process environment is read only by common/environment.cpp.
//
// This file depends on nothing but comm/backend_names, bootstrap/wire.h's constants and the public
// types, so that xffl-run, which does not link libxffl, compiles it too.
#ifndef XFFL_SRC_BOOTSTRAP_ENV_REGISTRY_H
#define XFFL_SRC_BOOTSTRAP_ENV_REGISTRY_H

#include <cstddef>
#include <string>
#include <vector>

namespace xffl::bootstrap::registry {

enum class Var {
  // The job's identity, replacing single fields of what the launcher says.
  Rank,
  WorldSize,
  LocalRank,
  LocalWorldSize,
  NodeRank,
  NodeWorldSize,
  MasterAddr,
  MasterPort,
  // The layout and the backend of xffl_state_from_env.
  Federated,
  FederatedLocalWorldSize,
  Hsdp,
  Backend,
  Device,
  Streams,
  // The options of every state (xffl_state_create reads them too).
  Timeout,
  LogLevel,
  JobId,
  AuthToken,
  CrossFacilityBackend,
  EnqueueOnly,
  UcxProcessSettings,
  // A facility's job joining a federation of facility jobs (src/federation/).
  Federation,
  Facility,
  FederationLeaseTtl,
  FacilityFaults,
  FederationQuorum,
  FederationCa,
  FederationCert,
  FederationKey,
  WireFormat,
  ErrorFeedback,
  // The wan crossing backend.
  WanStreams,
  WanEncryption,
  WanBdp,
  WanDialOut,
  WanRelay,
};

enum class Type {
  Count,      // a non-negative integer of at least `minimum`
  Port,       // an integer in [1, 65535]
  Seconds,    // a number of seconds in (0, 2147483], fractions allowed; read as milliseconds
  CountList,  // positive integers separated by commas ("4,8")
  Choice,     // one of `choices`, any case
  Flag,       // 0 or 1
  Text,       // any text of at most `max_length` bytes (0: no limit)
};

struct Choice {
  const char *name;
  int value;
  bool listed;  // false for an alias that messages and the table do not show ("warning")
};

struct Variable {
  Var id;
  const char *name;
  Type type;
  // What applies when the variable is unset or empty, written as the variable would be set; nullptr
  // where the launcher must say (then `unset` says what happens).
  const char *default_value;
  const char *unset;  // the default in words, for the table ("the launcher's", "none: FSDP")
  int minimum;                           // Count
  std::vector<Choice> choices;           // Choice
  std::vector<const char *> fallbacks;   // read in order when this one is unset (XFFL_JOB_ID)
  size_t max_length;                     // Text
  const char *doc;
};

// Every variable, in Var order.
const std::vector<Variable> &variables();
const Variable &variable(Var id);
const char *name(Var id);

// The accepted values in words: ">= 1", "none, ucx, nccl", "0 or 1".
std::string values_text(const Variable &variable);
// The default column: `default_value` or `unset`.
std::string default_text(const Variable &variable);
// "integer", "port", "seconds", "list", "choice", "flag", "text".
const char *type_name(Type type);

// The table for people: aligned columns for a terminal, or a Markdown table (README.md holds it).
std::string help_table();
std::string markdown_table();

}  // namespace xffl::bootstrap::registry

#endif
