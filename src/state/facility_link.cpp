#include "state/facility_link.h"

#include <numeric>

#include "bootstrap/env_registry.h"
#include "bootstrap/env_values.h"
#include "common/environment.h"
#include "common/error.h"
#include "federation/settings.h"

namespace xffl {

namespace {

std::string join(const std::vector<int> &values) {
  std::string text;
  for (int value : values) text += (text.empty() ? "" : ",") + std::to_string(value);
  return text;
}

}  // namespace

std::shared_ptr<FacilityLink> FacilityLink::from_options(const Options &options, int job_rank, int job_world_size) {
  using bootstrap::registry::Var;
  namespace registry = bootstrap::registry;
  const char *facility_name = registry::name(Var::Facility);
  const char *federation_name = registry::name(Var::Federation);
  const char *federated_name = registry::name(Var::Federated);
  if (!options.facility && !options.federation) return nullptr;
  if (!options.facility)
    fail(XFFL_EINVAL, federation_name, "='", *options.federation, "' is set but ", facility_name,
         " is not: a facility's job needs both (", facility_name, " = its index in ", federated_name, ")");
  if (!options.federation)
    fail(XFFL_EINVAL, facility_name, "=", *options.facility, " is set but ", federation_name,
         " is not: a facility's job needs both (", federation_name, " = the federation's store, "
         "xffl://host:port or etcd://h1:2379,...)");
  if (!options.federated_sizes)
    fail(XFFL_EINVAL, facility_name, "=", *options.facility, " needs ", federated_name,
         ": the size of every facility's job, in processes (2,4,2)");

  std::shared_ptr<FacilityLink> link(new FacilityLink());
  link->sizes_ = bootstrap::parse_count_list(federated_name, *options.federated_sizes);
  link->sizes_text_ = join(link->sizes_);
  const int groups = static_cast<int>(link->sizes_.size());
  link->facility_ = *options.facility;
  if (link->facility_ < 0 || link->facility_ >= groups)
    fail(XFFL_EINVAL, facility_name, "=", link->facility_, " outside [0, ", groups, "): ", federated_name, "='",
         *options.federated_sizes, "' lists ", groups, " facilit", groups == 1 ? "y" : "ies");
  const int mine = link->sizes_[static_cast<size_t>(link->facility_)];
  if (job_world_size != mine)
    fail(XFFL_EINVAL, "world size ", job_world_size, " (the job's WORLD_SIZE) is not facility ", link->facility_,
         "'s size ", mine, " in ", federated_name, "='", *options.federated_sizes,
         "': in facility mode each job is one facility");
  if (job_rank < 0 || job_rank >= job_world_size)
    fail(XFFL_EINVAL, "rank ", job_rank, " outside [0, ", job_world_size, ")");
  long long total = 0;
  for (int i = 0; i < groups; ++i) {
    if (i == link->facility_) link->offset_ = static_cast<int>(total);
    total += link->sizes_[static_cast<size_t>(i)];
  }
  if (total > (1LL << 30)) fail(XFFL_EINVAL, federated_name, "='", *options.federated_sizes, "' adds up to ", total, " ranks");
  link->world_size_ = static_cast<int>(total);
  link->job_rank_ = job_rank;
  link->endpoint_ = federation::parse_endpoint(*options.federation, federation_name);
  // etcds://: its CA and client certificate come only from the environment.
  federation::read_tls_files(process_environment(), &link->endpoint_);
  link->prefix_ = "xffl/" + options.job_id + "/";
  link->secret_ = options.auth_token;
  link->timeout_ms_ = options.timeout_ms;
  link->exchange_ = std::make_shared<federation::MembershipExchange>(
      link->endpoint_, options.auth_token, options.timeout_ms, link->prefix_, link->global_rank(job_rank));
  return link;
}

void FacilityLink::register_facility() {
  federation::MembershipExchange &exchange = membership();
  auto held = exchange.lock();
  federation::MembershipStore &store = exchange.store();
  const std::string key = prefix_ + "config/sizes";
  const federation::CasResult result = store.compare_and_swap(key, 0, sizes_text_);
  if (result.succeeded) return;
  if (result.current && result.current->value != sizes_text_)
    fail(XFFL_EINVAL, "facility ", facility_, ": ", bootstrap::registry::name(bootstrap::registry::Var::Federated),
         "='", sizes_text_, "' here, but the federation '", prefix_.substr(5, prefix_.size() - 6), "' at ",
         endpoint_.text, " has facilities of ", result.current->value,
         " (another federation with this XFFL_JOB_ID, or a facility started with other sizes)");
}

std::unique_ptr<federation::MembershipStore> FacilityLink::open_store() const {
  return federation::connect_membership_store(endpoint_, secret_, timeout_ms_);
}

void FacilityLink::check_layout_sizes(const std::vector<int> &sizes) const {
  if (sizes != sizes_)
    fail(XFFL_EINVAL, "federated sizes (", join(sizes), ") differ from the facilities' (",
         bootstrap::registry::name(bootstrap::registry::Var::Federated), "=", sizes_text_,
         "): in facility mode (facility ", facility_, ") the federated groups are the facilities");
}

}  // namespace xffl
