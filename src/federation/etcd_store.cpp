#include "federation/etcd_store.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/error.h"
#include "federation/curl_api.h"

namespace xffl::federation {

using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kMaxReply = size_t{16} << 20;
constexpr int kGrpcPermissionDenied = 7;
constexpr int kGrpcUnavailable = 14;
constexpr int kGrpcUnauthenticated = 16;

bool contains(const std::string &text, const char *part) { return text.find(part) != std::string::npos; }

// etcd's range end for "every key with this prefix": the prefix with its last byte below 0xff
// incremented and what follows dropped; "\0" (every key) when there is no such byte.
std::string prefix_end(const std::string &prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    auto last = static_cast<unsigned char>(end.back());
    if (last < 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

KeyValue read_kv(const json::Value &kv) {
  KeyValue entry;
  if (const json::Value *key = kv.find("key")) entry.key = json::unbase64(key->text);
  if (const json::Value *value = kv.find("value")) entry.value = json::unbase64(value->text);
  if (const json::Value *v = kv.find("create_revision")) entry.create_revision = v->as_int64();
  if (const json::Value *v = kv.find("mod_revision")) entry.mod_revision = v->as_int64();
  if (const json::Value *v = kv.find("lease")) entry.lease = v->as_int64();
  return entry;
}

std::vector<KeyValue> read_kvs(const json::Value &range) {
  std::vector<KeyValue> out;
  if (const json::Value *kvs = range.find("kvs"))
    for (const json::Value &kv : kvs->items) out.push_back(read_kv(kv));
  return out;
}

int64_t header_revision(const json::Value &reply) {
  const json::Value *header = reply.find("header");
  const json::Value *revision = header ? header->find("revision") : nullptr;
  return revision ? revision->as_int64() : 0;
}

std::string put_request(const std::string &key, const std::string &value, LeaseId lease) {
  std::string body = "{\"key\":" + json::quote(json::base64(key)) + ",\"value\":" + json::quote(json::base64(value));
  if (lease != 0) body += ",\"lease\":\"" + std::to_string(lease) + "\"";
  return body + "}";
}

}  // namespace

#ifdef XFFL_HAVE_CURL

struct EtcdStore::Http {
  CURL *handle = nullptr;
  ~Http() {
    if (handle) curl::curl().curl_easy_cleanup(handle);
  }
};

namespace {

size_t collect(char *data, size_t size, size_t count, void *user) {
  auto *body = static_cast<std::string *>(user);
  size_t bytes = size * count;
  if (body->size() + bytes > kMaxReply) return 0;  // makes curl fail with CURLE_WRITE_ERROR
  body->append(data, bytes);
  return bytes;
}

// The TLS settings of etcds:// on the handle.
void set_tls_options(CURL *h, const Endpoint &endpoint) {
  const curl::CurlApi &api = curl::curl();
  const TlsFiles &files = endpoint.tls_files;
  // Verification stays on whatever the files say: an etcds:// member that cannot prove who it is
  // never receives the secret.
  api.curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
  api.curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!files.ca.empty()) api.curl_easy_setopt(h, CURLOPT_CAINFO, files.ca.c_str());
  if (!files.cert.empty()) {
    api.curl_easy_setopt(h, CURLOPT_SSLCERT, files.cert.c_str());
    api.curl_easy_setopt(h, CURLOPT_SSLKEY, files.key.c_str());
  }
}

// Throws for a curl failure that TLS verification or its files caused (etcd_store.h); returns for any
// other failure, which fails over to the next member.
void fail_on_tls_refusal(CURLcode rc, const Endpoint &endpoint, const Member &member) {
  const curl::CurlApi &api = curl::curl();
  const TlsFiles &files = endpoint.tls_files;
  const std::string ca = files.ca.empty() ? std::string("the system's CA store") : "XFFL_FEDERATION_CA=" + files.ca;
  switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION:
      // Another member would be verified the same way: no failover, the configuration is wrong.
      fail(XFFL_EAUTH, "etcd federation ", endpoint.text, ": member ", member.text(),
           " presented a certificate that ", ca, " does not verify, or that does not name ", member.host, " (",
           api.curl_easy_strerror(rc), ")");
    case CURLE_SSL_CACERT_BADFILE:
      fail(XFFL_EINVAL, "etcd federation ", endpoint.text, ": ", ca, " is not a PEM CA file libcurl can read (",
           api.curl_easy_strerror(rc), ")");
    case CURLE_SSL_CERTPROBLEM:
      fail(XFFL_EINVAL, "etcd federation ", endpoint.text, ": the client certificate XFFL_FEDERATION_CERT=",
           files.cert, " with XFFL_FEDERATION_KEY=", files.key, " is not usable (", api.curl_easy_strerror(rc),
           ")");
    default:
      return;  // a connection that failed for another reason: the next member is tried
  }
}

}  // namespace

EtcdStore::EtcdStore(Endpoint endpoint, std::string secret, int timeout_ms)
    : endpoint_(std::move(endpoint)), secret_(std::move(secret)), timeout_ms_(timeout_ms), call_timeout_ms_(timeout_ms), http_(new Http) {
  http_->handle = curl::curl().curl_easy_init();
  if (!http_->handle) fail(XFFL_ENOMEM, "libcurl could not create a handle for the federation ", endpoint_.text);
  // Reaching a member (and authenticating there) now, so that a wrong endpoint or secret shows at
  // connection time: a range of one key nobody writes.
  request("/v3/kv/range", "{\"key\":" + json::quote(json::base64("xffl-federation/ping")) + ",\"count_only\":true}",
          "connecting");
}

EtcdStore::~EtcdStore() = default;

std::string EtcdStore::current_member() const { return endpoint_.members.at(current_).text(); }

bool EtcdStore::attempt(const std::string &path, const std::string &body, bool with_token, int budget_ms,
                        Reply *reply, std::string *why, bool *timed_out) {
  const curl::CurlApi &api = curl::curl();
  CURL *h = http_->handle;
  const Member &member = endpoint_.members.at(current_);
  std::string url = (endpoint_.tls ? "https://" : "http://") + member.text() + path;
  reply->body.clear();
  curl_slist *headers = api.curl_slist_append(nullptr, "Content-Type: application/json");
  std::string authorization = "Authorization: " + token_;
  if (with_token && !token_.empty()) headers = api.curl_slist_append(headers, authorization.c_str());
  // A dead member must not eat the whole budget before the next one is tried.
  long connect_ms = std::min<long>(budget_ms, std::max<long>(500, call_timeout_ms_ / 4));
  api.curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  api.curl_easy_setopt(h, CURLOPT_POST, 1L);
  api.curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
  api.curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  api.curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  api.curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max(1, budget_ms)));
  api.curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, std::max(1L, connect_ms));
  api.curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  api.curl_easy_setopt(h, CURLOPT_NOPROXY, "*");  // loopback and facility hosts, never a proxy
  api.curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &collect);
  api.curl_easy_setopt(h, CURLOPT_WRITEDATA, &reply->body);
  if (endpoint_.tls) set_tls_options(h, endpoint_);
  CURLcode rc = api.curl_easy_perform(h);
  api.curl_easy_setopt(h, CURLOPT_HTTPHEADER, static_cast<curl_slist *>(nullptr));
  api.curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    if (endpoint_.tls) fail_on_tls_refusal(rc, endpoint_, member);
    *timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    *why = member.text() + ": " + api.curl_easy_strerror(rc);
    if (rc == CURLE_WRITE_ERROR) *why += " (a reply larger than 16 MiB)";
    return false;
  }
  api.curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &reply->status);
  return true;
}

json::Value EtcdStore::request(const std::string &path, const std::string &body, const std::string &doing) {
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::milliseconds(call_timeout_ms_);
  const size_t members = endpoint_.members.size();
  std::vector<std::string> failures(members);
  bool any_timed_out = false, reauthenticated = false;
  auto pause = std::chrono::milliseconds(50);
  size_t tried_this_round = 0;
  for (;;) {
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (remaining <= 0) {
      std::string words;
      for (const std::string &failure : failures)
        if (!failure.empty()) words += (words.empty() ? "" : "; ") + failure;
      fail(any_timed_out ? XFFL_ETIMEOUT : XFFL_ENETWORK, "etcd federation ", endpoint_.text, ": no member answered ",
           doing, " within ", call_timeout_ms_, " ms (", words.empty() ? "no attempt" : words, ")");
    }
    Reply reply;
    std::string why;
    bool timed_out = false;
    bool answered = true;
    const bool authenticating = !secret_.empty() && token_.empty();
    if (authenticating) {
      std::string auth = "{\"name\":" + json::quote(endpoint_.user) + ",\"password\":" + json::quote(secret_) + "}";
      answered = attempt("/v3/auth/authenticate", auth, false, static_cast<int>(remaining), &reply, &why, &timed_out);
      if (answered && reply.status == 200) {
        json::Value parsed = json::parse(reply.body);
        const json::Value *token = parsed.find("token");
        if (!token || token->text.empty())
          fail(XFFL_EAUTH, "etcd federation ", endpoint_.text, ": member ", current_member(),
               " authenticated user '", endpoint_.user, "' but gave no token: is auth enabled there?");
        token_ = token->text;
      }
    }
    if (answered && (!authenticating || reply.status == 200))
      answered = attempt(path, body, true, static_cast<int>(remaining), &reply, &why, &timed_out);
    if (answered) {
      if (reply.status == 200) {
        try {
          return json::parse(reply.body);
        } catch (const std::exception &error) {
          fail(XFFL_ENETWORK, "etcd federation ", endpoint_.text, ": member ", current_member(),
               " answered ", doing, " with a body that is not etcd's JSON (", error.what(), ")");
        }
      }
      std::string message;
      int code = -1;
      try {
        json::Value parsed = json::parse(reply.body);
        if (const json::Value *m = parsed.find("message")) message = m->text;
        else if (const json::Value *e = parsed.find("error")) message = e->text;
        if (const json::Value *c = parsed.find("code")) code = static_cast<int>(c->as_int64(-1));
      } catch (const std::exception &) {
      }
      if (message.empty())
        fail(XFFL_ENETWORK, "etcd federation ", endpoint_.text, ": member ", current_member(), " answered ", doing,
             " with HTTP status ", reply.status, " and no etcd error (", reply.body.substr(0, 200),
             "): is it an etcd v3 gateway?");
      if (contains(message, "invalid auth token") && !reauthenticated) {
        // Simple tokens expire (etcd's --auth-token-ttl): once per call, get a fresh one.
        token_.clear();
        reauthenticated = true;
        continue;
      }
      bool auth_error = code == kGrpcUnauthenticated || code == kGrpcPermissionDenied ||
                        contains(message, "authentication failed") || contains(message, "user name is empty") ||
                        contains(message, "permission denied") || contains(message, "invalid auth token") ||
                        // A job with a secret refuses an etcd that would let anyone in (as the xffl://
                        // client refuses a server that cannot prove it knows the secret).
                        contains(message, "authentication is not enabled");
      if (auth_error)
        fail(XFFL_EAUTH, "etcd federation ", endpoint_.text, ": member ", current_member(), " refused ", doing,
             authenticating || !secret_.empty() ? " as user '" + endpoint_.user + "'" : std::string(" (no job secret)"),
             ": ", message);
      bool unavailable = code == kGrpcUnavailable || contains(message, "no leader") ||
                         contains(message, "leader changed") || contains(message, "timed out");
      if (!unavailable)
        fail(XFFL_EPEER, "etcd federation ", endpoint_.text, ": member ", current_member(), " failed ", doing, ": ",
             message);
      why = current_member() + ": " + message;
    }
    // Fail over to the next member; a full round without an answer pauses before the next one.
    failures[current_] = why;
    any_timed_out = any_timed_out || timed_out;
    current_ = (current_ + 1) % members;
    token_.clear();
    if (++tried_this_round == members) {
      tried_this_round = 0;
      auto left = deadline - Clock::now();
      if (left > Clock::duration::zero()) std::this_thread::sleep_for(std::min<Clock::duration>(pause, left));
      pause = std::min(pause * 2, std::chrono::milliseconds(1000));
    }
  }
}

#else

struct EtcdStore::Http {};

EtcdStore::EtcdStore(Endpoint endpoint, std::string secret, int timeout_ms)
    : endpoint_(std::move(endpoint)), secret_(std::move(secret)), timeout_ms_(timeout_ms), call_timeout_ms_(timeout_ms) {
  fail(XFFL_EUNSUPPORTED, "etcd federation ", endpoint_.text,
       ": this build of xffl has no libcurl headers (Debian: libcurl4-openssl-dev); use xffl:// or rebuild");
}

EtcdStore::~EtcdStore() = default;

std::string EtcdStore::current_member() const { return endpoint_.members.at(current_).text(); }

json::Value EtcdStore::request(const std::string &, const std::string &, const std::string &) { return {}; }

#endif

LeaseId EtcdStore::grant_lease(int64_t ttl_seconds) {
  check_ttl(endpoint_.text, ttl_seconds);
  json::Value reply = request("/v3/lease/grant", "{\"TTL\":\"" + std::to_string(ttl_seconds) + "\",\"ID\":\"0\"}",
                              "granting a lease of " + std::to_string(ttl_seconds) + " s");
  const json::Value *id = reply.find("ID");
  if (!id || id->as_int64() == 0) {
    const json::Value *error = reply.find("error");
    fail(XFFL_EPEER, "etcd federation ", endpoint_.text, " granted no lease: ",
         error ? error->text : std::string("no ID in its answer"));
  }
  return id->as_int64();
}

int64_t EtcdStore::keep_alive(LeaseId lease) {
  // The gateway's keep-alive is a stream; one request object gets one result, then the stream ends.
  json::Value reply = request("/v3/lease/keepalive", "{\"ID\":\"" + std::to_string(lease) + "\"}",
                              "keeping lease " + std::to_string(lease) + " alive");
  const json::Value *result = reply.find("result");
  if (const json::Value *error = reply.find("error"))
    fail(XFFL_EPEER, "etcd federation ", endpoint_.text, " failed keeping lease ", lease, " alive: ",
         error->find("message") ? error->find("message")->text : std::string("an error"));
  const json::Value *ttl = result ? result->find("TTL") : nullptr;
  return ttl ? ttl->as_int64() : 0;  // etcd leaves TTL out (0) for a lease that has ended
}

void EtcdStore::revoke(LeaseId lease) {
  try {
    request("/v3/lease/revoke", "{\"ID\":\"" + std::to_string(lease) + "\"}", "revoking lease " + std::to_string(lease));
  } catch (const Error &error) {
    // Revoking an ended lease is not an error (membership_store.h); etcd says "lease not found".
    if (error.status() == XFFL_EPEER && contains(error.what(), "lease not found")) return;
    throw;
  }
}

int64_t EtcdStore::put(const std::string &key, const std::string &value, LeaseId lease) {
  check_key(endpoint_.text, key);
  check_value(endpoint_.text, key, value);
  return header_revision(request("/v3/kv/put", put_request(key, value, lease), "putting " + key));
}

std::optional<KeyValue> EtcdStore::get(const std::string &key) {
  check_key(endpoint_.text, key);
  std::vector<KeyValue> kvs =
      read_kvs(request("/v3/kv/range", "{\"key\":" + json::quote(json::base64(key)) + "}", "getting " + key));
  if (kvs.empty()) return std::nullopt;
  return kvs.front();
}

CasResult EtcdStore::compare_and_swap(const std::string &key, int64_t expected_mod_revision, const std::string &value,
                                      LeaseId lease) {
  check_key(endpoint_.text, key);
  check_value(endpoint_.text, key, value);
  const std::string key64 = json::quote(json::base64(key));
  // One transaction: if mod_revision(key) == expected then put, else read the key as it is. An absent
  // key's mod_revision compares as 0 in etcd, which gives "expected 0: only if absent".
  std::string body = "{\"compare\":[{\"key\":" + key64 + ",\"target\":\"MOD\",\"result\":\"EQUAL\",\"mod_revision\":\"" +
                     std::to_string(expected_mod_revision) + "\"}],\"success\":[{\"request_put\":" +
                     put_request(key, value, lease) + "}],\"failure\":[{\"request_range\":{\"key\":" + key64 + "}}]}";
  json::Value reply = request("/v3/kv/txn", body,
                              "swapping " + key + " at revision " + std::to_string(expected_mod_revision));
  CasResult result;
  const json::Value *succeeded = reply.find("succeeded");
  result.succeeded = succeeded && succeeded->boolean;
  result.revision = header_revision(reply);
  if (!result.succeeded)
    if (const json::Value *responses = reply.find("responses"))
      for (const json::Value &response : responses->items)
        if (const json::Value *range = response.find("response_range")) {
          std::vector<KeyValue> kvs = read_kvs(*range);
          if (!kvs.empty()) result.current = kvs.front();
        }
  return result;
}

Listing EtcdStore::list(const std::string &prefix) {
  const std::string key = prefix.empty() ? std::string(1, '\0') : prefix;
  json::Value reply = request("/v3/kv/range",
                              "{\"key\":" + json::quote(json::base64(key)) + ",\"range_end\":" +
                                  json::quote(json::base64(prefix_end(prefix))) + "}",
                              "listing prefix '" + prefix + "'");
  Listing listing;
  listing.revision = header_revision(reply);
  listing.entries = read_kvs(reply);
  std::sort(listing.entries.begin(), listing.entries.end(),
            [](const KeyValue &a, const KeyValue &b) { return a.key < b.key; });
  return listing;
}

std::optional<Listing> EtcdStore::wait_for_change(const std::string &prefix, const Listing &since, int timeout_ms) {
  // A bounded poll: the gateway's watch is a long-lived stream, which this client does not hold. The
  // listing is compared by keys and mod_revisions, so a lease's end (keys gone) counts as a change.
  auto same = [](const Listing &a, const Listing &b) {
    if (a.entries.size() != b.entries.size()) return false;
    for (size_t i = 0; i < a.entries.size(); ++i)
      if (a.entries[i].key != b.entries[i].key || a.entries[i].mod_revision != b.entries[i].mod_revision) return false;
    return true;
  };
  const auto deadline = Clock::now() + std::chrono::milliseconds(std::max(0, std::min(timeout_ms, timeout_ms_)));
  auto pause = std::chrono::milliseconds(50);
  for (;;) {
    Listing now = list(prefix);
    if (!same(now, since)) return now;
    auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return std::nullopt;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, left));
    pause = std::min(pause * 2, std::chrono::milliseconds(400));
  }
}

}  // namespace xffl::federation
