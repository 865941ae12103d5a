// The membership store on etcd v3, through its JSON gateway (POST /v3/...; keys and values base64),
// with libcurl loaded at run time (curl_api.h).
//
// Failover: requests go to one member; a connection error, a timeout of that member or an etcd
// "unavailable" answer (no leader) moves to the next member in XFFL_FEDERATION's order, round after
// round with a growing pause, until the call's timeout. A request that reached a member that died
// before answering may have been applied: a retried put writes twice (harmless), a retried
// compare_and_swap then fails and reports the key as it is (the caller reads its own value there).
//
// Authentication: with a job secret, the client authenticates as the endpoint's user (etcd://user@...,
// default "xffl") with the secret as password (POST /v3/auth/authenticate) and sends etcd's token with
// every request. etcd's simple tokens are per member and expire, so the client authenticates again
// after a failover and when a member says the token is invalid. The secret travels in the
// authenticate request: with etcd:// (plain HTTP) it crosses in clear, so use etcd:// only on trusted
// networks and etcds:// (HTTPS) elsewhere. Without a secret no authentication is attempted; an etcd
// with auth enabled then refuses every request (XFFL_EAUTH).
//
// TLS (etcds://): every member's certificate is verified (chain and host name) against the CA file
// of the endpoint's TlsFiles, or the system's CA store; a client certificate is presented when one is
// given (etcd's --client-cert-auth). A certificate that does not verify is XFFL_EAUTH at once, not a
// failover: another member is verified against the same CA. An unreadable CA file or client
// certificate is XFFL_EINVAL. etcd's JSON gateway refuses a client certificate with a CommonName
// (HTTP 400: the identity would not reach etcd's auth), so a client certificate for xffl has none
// (for example subject "/O=<facility>"); the job secret is what authenticates the user.
//
// Setting etcd up for a job (etcdctl, v3 API), once per cluster:
//   etcdctl user add root:<admin password>      etcdctl user grant-role root root
//   etcdctl user add xffl:<the job secret>      etcdctl role add xffl
//   etcdctl role grant-permission xffl --prefix=true readwrite xffl
//   etcdctl user grant-role xffl xffl           etcdctl auth enable
// (the federation's keys, and the key a connection reads to check its access, "xffl-federation/ping",
// start with "xffl"; tests/federation/backends.cpp does the same with the root role for brevity).
#ifndef XFFL_SRC_FEDERATION_ETCD_STORE_H
#define XFFL_SRC_FEDERATION_ETCD_STORE_H

#include <memory>

#include "federation/json.h"
#include "federation/membership_store.h"

namespace xffl::federation {

class EtcdStore final : public MembershipStore {
 public:
  EtcdStore(Endpoint endpoint, std::string secret, int timeout_ms);
  ~EtcdStore() override;

  const std::string &endpoint() const override { return endpoint_.text; }
  LeaseId grant_lease(int64_t ttl_seconds) override;
  int64_t keep_alive(LeaseId lease) override;
  void revoke(LeaseId lease) override;
  int64_t put(const std::string &key, const std::string &value, LeaseId lease) override;
  std::optional<KeyValue> get(const std::string &key) override;
  CasResult compare_and_swap(const std::string &key, int64_t expected_mod_revision, const std::string &value,
                             LeaseId lease) override;
  void compare_and_swap_unanswered(const std::string &key, int64_t expected_mod_revision,
                                   const std::string &value) override {
    compare_and_swap(key, expected_mod_revision, value, 0);
  }
  void put_unanswered(const std::string &key, const std::string &value) override { put(key, value, 0); }
  Listing list(const std::string &prefix) override;
  std::optional<Listing> wait_for_change(const std::string &prefix, const Listing &since, int timeout_ms) override;
  void set_call_timeout(int timeout_ms) override {
    call_timeout_ms_ = timeout_ms > 0 && timeout_ms < timeout_ms_ ? timeout_ms : timeout_ms_;
  }

  // The member requests go to now ("127.0.0.1:2379"), for tests of failover.
  std::string current_member() const;

 private:
  struct Http;  // the curl handle
  struct Reply {
    long status = 0;
    std::string body;
  };
  // POSTs body to path on the current member, failing over; returns the parsed 200 reply, or throws
  // with the status etcd's error maps to. `doing` names what was awaited.
  json::Value request(const std::string &path, const std::string &body, const std::string &doing);
  void authenticate(const std::string &doing);
  // One attempt on the current member: false with *why set for a transport failure (fail over).
  bool attempt(const std::string &path, const std::string &body, bool with_token, int budget_ms, Reply *reply,
               std::string *why, bool *timed_out);

  Endpoint endpoint_;
  std::string secret_;
  int timeout_ms_;       // the connection's
  int call_timeout_ms_;  // each call's: timeout_ms_ unless set_call_timeout said less
  size_t current_ = 0;
  std::string token_;  // etcd's auth token for members_[current_]; empty: not authenticated there
  std::unique_ptr<Http> http_;
};

}  // namespace xffl::federation

#endif
