#include "bootstrap/pmix_store.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "common/error.h"

#ifdef XFFL_HAVE_PMIX
#include "bootstrap/pmix_api.h"
#endif

namespace xffl::bootstrap {

#ifndef XFFL_HAVE_PMIX

std::unique_ptr<Store> open_store_through_pmix(StoreConfig config) {
  fail(XFFL_EUNSUPPORTED, "rank ", config.rank, ": the launcher offers PMIx for the store's address, but this build "
       "of xffl has no PMIx support (built without libpmix-dev); set MASTER_ADDR to name rank 0's host");
}

#else

namespace {

using pmix::pmix;

// PMIX_TIMEOUT counts whole seconds; round up so that the bound is never shorter than asked.
int timeout_seconds(int timeout_ms) { return timeout_ms / 1000 + (timeout_ms % 1000 != 0 ? 1 : 0); }

void set_key(char *key, const char *name) {
  std::strncpy(key, name, PMIX_MAX_KEYLEN);
  key[PMIX_MAX_KEYLEN] = '\0';
}

pmix_info_t timeout_info(int timeout_ms) {
  pmix_info_t info;
  std::memset(&info, 0, sizeof info);
  set_key(info.key, PMIX_TIMEOUT);
  info.value.type = PMIX_INT;
  info.value.data.integer = timeout_seconds(timeout_ms);
  return info;
}

pmix_info_t collect_info() {
  pmix_info_t info;
  std::memset(&info, 0, sizeof info);
  set_key(info.key, PMIX_COLLECT_DATA);
  info.value.type = PMIX_BOOL;
  info.value.data.flag = true;
  return info;
}

std::string pmix_words(pmix_status_t status) {
  const char *words = pmix().PMIx_Error_string(status);
  return std::string(words ? words : "unknown PMIx status") + " (" + std::to_string(status) + ")";
}

// PMIx_Init on construction, PMIx_Finalize on destruction: the session lasts one exchange.
class PmixSession {
 public:
  explicit PmixSession(int rank) {
    pmix_status_t status = pmix().PMIx_Init(&self_, nullptr, 0);
    if (status != PMIX_SUCCESS)
      fail(XFFL_EBACKEND, "rank ", rank, ": PMIx_Init failed: ", pmix_words(status),
           "; the launcher set PMIX_RANK and PMIX_NAMESPACE but its PMIx server does not answer");
  }
  ~PmixSession() { pmix().PMIx_Finalize(nullptr, 0); }
  PmixSession(const PmixSession &) = delete;
  PmixSession &operator=(const PmixSession &) = delete;

  const pmix_proc_t &self() const { return self_; }
  std::string nspace() const { return std::string(self_.nspace); }
  pmix_proc_t proc(pmix_rank_t rank) const {
    pmix_proc_t proc;
    std::memset(&proc, 0, sizeof proc);
    std::memcpy(proc.nspace, self_.nspace, sizeof proc.nspace);
    proc.rank = rank;
    return proc;
  }

 private:
  pmix_proc_t self_{};
};

// A job attribute that PMIx holds as uint32 (PMIX_JOB_SIZE, PMIX_LOCAL_SIZE); nullopt where the
// launcher does not provide it.
std::optional<uint32_t> job_attribute(const PmixSession &session, const char *key, int timeout_ms) {
  pmix_proc_t job = session.proc(PMIX_RANK_WILDCARD);
  pmix_info_t info = timeout_info(timeout_ms);
  pmix_value_t *value = nullptr;
  if (pmix().PMIx_Get(&job, key, &info, 1, &value) != PMIX_SUCCESS || !value) return std::nullopt;
  std::optional<uint32_t> result;
  if (value->type == PMIX_UINT32) result = value->data.uint32;
  pmix().PMIx_Value_destruct(value);
  std::free(value);
  return result;
}

void check_numbering(const PmixSession &session, const StoreConfig &config) {
  if (session.self().rank != static_cast<pmix_rank_t>(config.rank))
    fail(XFFL_EINVAL, "rank ", config.rank, ": PMIx numbers this process rank ", session.self().rank,
         " of namespace '", session.nspace(),
         "', so PMIx cannot say where rank 0 runs (XFFL_RANK, or variables of an outer launcher, numbered it "
         "otherwise?); set MASTER_ADDR to name rank 0's host");
  std::optional<uint32_t> size = job_attribute(session, PMIX_JOB_SIZE, config.timeout_ms);
  if (size && *size != static_cast<uint32_t>(config.world_size))
    fail(XFFL_EINVAL, "rank ", config.rank, ": PMIx namespace '", session.nspace(), "' has ", *size,
         " processes but the world size is ", config.world_size,
         " (XFFL_WORLD_SIZE changed it?); set MASTER_ADDR to name rank 0's host");
}

// Where rank 0 serves: loopback when every rank is on this host (nothing leaves it), else the host's
// name, which the other nodes resolve as they resolve the names in the launcher's host list.
std::string serving_host(const PmixSession &session, const StoreConfig &config) {
  std::optional<uint32_t> local = job_attribute(session, PMIX_LOCAL_SIZE, config.timeout_ms);
  if (local && *local == static_cast<uint32_t>(config.world_size)) return "127.0.0.1";
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0)
    fail(XFFL_ENETWORK, "rank 0: gethostname failed (", std::strerror(errno), "), so the store's host cannot be named");
  return name;
}

// Distinct per store of this process, so that a second state of one job does not read the first's
// address; every rank opens its stores in the same order, so the n-th keys agree.
std::string exchange_key(const StoreConfig &config) {
  static std::atomic<unsigned> stores_opened{0};
  return "xffl.store." + config.job_id + "." + std::to_string(stores_opened++);
}

void put_and_fence(const PmixSession &session, const StoreConfig &config, const std::string &key,
                   const std::string &text) {
  if (!key.empty()) {
    pmix_value_t value;
    std::memset(&value, 0, sizeof value);
    value.type = PMIX_STRING;
    value.data.string = const_cast<char *>(text.c_str());  // PMIx_Put copies it
    pmix_status_t status = pmix().PMIx_Put(PMIX_GLOBAL, key.c_str(), &value);
    if (status != PMIX_SUCCESS)
      fail(XFFL_EBACKEND, "rank 0: PMIx_Put of the store's address failed: ", pmix_words(status));
  }
  pmix_status_t status = pmix().PMIx_Commit();
  if (status != PMIX_SUCCESS) fail(XFFL_EBACKEND, "rank ", config.rank, ": PMIx_Commit failed: ", pmix_words(status));
  pmix_info_t info[2] = {collect_info(), timeout_info(config.timeout_ms)};
  status = pmix().PMIx_Fence(nullptr, 0, info, 2);
  if (status == PMIX_ERR_TIMEOUT)
    fail(XFFL_ETIMEOUT, "rank ", config.rank, ": timed out after ", config.timeout_ms, " ms in PMIx_Fence over the ",
         config.world_size, " ranks of PMIx namespace '", session.nspace(), "', waiting for ",
         config.rank == 0 ? "the other ranks to read the store's address" : "rank 0 to publish the store's address");
  if (status != PMIX_SUCCESS)
    fail(XFFL_EBACKEND, "rank ", config.rank, ": PMIx_Fence over PMIx namespace '", session.nspace(),
         "' (exchanging the store's address) failed: ", pmix_words(status));
}

std::string read_published(const PmixSession &session, const StoreConfig &config, const std::string &key) {
  pmix_proc_t root = session.proc(0);
  pmix_info_t info = timeout_info(config.timeout_ms);
  pmix_value_t *value = nullptr;
  pmix_status_t status = pmix().PMIx_Get(&root, key.c_str(), &info, 1, &value);
  if (status == PMIX_ERR_TIMEOUT)
    fail(XFFL_ETIMEOUT, "rank ", config.rank, ": timed out after ", config.timeout_ms,
         " ms in PMIx_Get waiting for key '", key, "' (the store's address) from rank 0 of PMIx namespace '",
         session.nspace(), "'");
  if (status != PMIX_SUCCESS || !value)
    fail(XFFL_EBACKEND, "rank ", config.rank, ": PMIx_Get of key '", key, "' (the store's address) from rank 0 failed: ",
         pmix_words(status));
  std::string text;
  const bool is_string = value->type == PMIX_STRING && value->data.string;
  if (is_string) text = value->data.string;
  pmix().PMIx_Value_destruct(value);
  std::free(value);
  if (!is_string) fail(XFFL_EBACKEND, "rank ", config.rank, ": rank 0's key '", key, "' is not a string");
  return text;
}

// "ok <port> <host>" or "error <rank 0's message>".
void apply_published(const std::string &text, const std::string &key, StoreConfig &config) {
  if (text.rfind("error ", 0) == 0)
    fail(XFFL_EBACKEND, "rank ", config.rank, ": rank 0 could not start the store: ", text.substr(6));
  const size_t space = text.find(' ', 3);
  int port = 0;
  if (text.rfind("ok ", 0) == 0 && space != std::string::npos && space + 1 < text.size()) {
    try {
      port = std::stoi(text.substr(3, space - 3));
    } catch (const std::exception &) {
      port = 0;
    }
  }
  if (port < 1 || port > 65535)
    fail(XFFL_EBACKEND, "rank ", config.rank, ": rank 0's key '", key, "' holds '", text,
         "', not 'ok <port> <host>' (another program of the job wrote it?)");
  config.master_port = port;
  config.master_addr = text.substr(space + 1);
}

}  // namespace

std::unique_ptr<Store> open_store_through_pmix(StoreConfig config) {
  const std::string key = exchange_key(config);
  std::unique_ptr<Store> store;
  {
    PmixSession session(config.rank);
    check_numbering(session, config);
    if (config.rank == 0) {
      std::string published;
      try {
        config.master_addr = serving_host(session, config);
        store = std::make_unique<Store>(config);
        published = "ok " + std::to_string(store->port()) + " " + config.master_addr;
      } catch (const Error &error) {
        put_and_fence(session, config, key, std::string("error ") + error.what());
        throw;
      }
      put_and_fence(session, config, key, published);
      config.logger.info("published the store's address ", store->address(), " through PMIx namespace '",
                         session.nspace(), "'");
      return store;
    }
    put_and_fence(session, config, "", "");
    apply_published(read_published(session, config, key), key, config);
  }  // PMIx finalized: the store needs it no more
  return std::make_unique<Store>(config);
}

#endif

}  // namespace xffl::bootstrap
