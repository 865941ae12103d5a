#include "federation/federation_requests.h"

#include "common/error.h"

namespace xffl::federation {

using bootstrap::wire::PayloadReader;
using bootstrap::wire::PayloadWriter;
using bootstrap::wire::ProtocolError;
using protocol::Type;
using Clock = FederationCore::Clock;

namespace {

Reply failure(const Error &error) {
  PayloadWriter out;
  out.i32(error.status());
  std::string message = error.what();
  out.text(message.substr(0, protocol::kMaxText));
  return {Type::Failure, out.take()};
}

Reply listing_reply(FederationCore &core, const std::string &prefix, Clock::time_point now) {
  Listing listing = core.list(prefix, now);
  if (listing.entries.size() > protocol::kMaxListed)
    fail(XFFL_EPEER, "prefix '", prefix, "' holds ", listing.entries.size(), " keys, more than the ",
         protocol::kMaxListed, " one listing carries");
  PayloadWriter out;
  protocol::put_i64(out, listing.revision);
  out.u32(static_cast<uint32_t>(listing.entries.size()));
  for (const KeyValue &entry : listing.entries) protocol::put_entry(out, entry);
  Reply reply{Type::Entries, out.take()};
  if (reply.payload.size() > protocol::kMaxPayload)
    fail(XFFL_EPEER, "the listing of prefix '", prefix, "' takes ", reply.payload.size(), " bytes, more than a frame's ",
         protocol::kMaxPayload);
  return reply;
}

Reply answer_now(FederationCore &core, const protocol::Frame &request, Clock::time_point now, WatchRequest *watch,
                 bool *parked) {
  PayloadReader in(request.payload);
  PayloadWriter out;
  switch (request.type) {
    case Type::Grant: {
      int64_t ttl = protocol::get_i64(in);
      in.finish();
      protocol::put_i64(out, core.grant(ttl, now));
      return {Type::Lease, out.take()};
    }
    case Type::KeepAlive: {
      LeaseId lease = protocol::get_i64(in);
      in.finish();
      protocol::put_i64(out, core.keep_alive(lease, now));
      return {Type::Ttl, out.take()};
    }
    case Type::Revoke: {
      LeaseId lease = protocol::get_i64(in);
      in.finish();
      protocol::put_i64(out, core.revoke(lease, now));
      return {Type::Revision, out.take()};
    }
    case Type::Put: {
      std::string key = in.text(kMaxKey, "key"), value = in.text(kMaxValue, "value");
      LeaseId lease = protocol::get_i64(in);
      in.finish();
      protocol::put_i64(out, core.put(key, value, lease, now));
      return {Type::Revision, out.take()};
    }
    case Type::Get: {
      std::string key = in.text(kMaxKey, "key");
      in.finish();
      std::optional<KeyValue> entry = core.get(key, now);
      out.u8(entry ? 1 : 0);
      if (entry) protocol::put_entry(out, *entry);
      return {Type::Entry, out.take()};
    }
    case Type::Cas: {
      std::string key = in.text(kMaxKey, "key");
      int64_t expected = protocol::get_i64(in);
      std::string value = in.text(kMaxValue, "value");
      LeaseId lease = protocol::get_i64(in);
      in.finish();
      CasResult result = core.compare_and_swap(key, expected, value, lease, now);
      out.u8(result.succeeded ? 1 : 0);
      protocol::put_i64(out, result.revision);
      out.u8(result.current ? 1 : 0);
      if (result.current) protocol::put_entry(out, *result.current);
      return {Type::Swapped, out.take()};
    }
    case Type::List: {
      std::string prefix = in.text(kMaxKey, "prefix");
      in.finish();
      return listing_reply(core, prefix, now);
    }
    case Type::Watch: {
      watch->prefix = in.text(kMaxKey, "prefix");
      watch->since = protocol::get_i64(in);
      watch->wait_ms = in.u32();
      in.finish();
      *parked = true;
      return {};
    }
    default:
      throw ProtocolError(std::string("unexpected ") + protocol::type_name(request.type) + " frame after the handshake");
  }
}

}  // namespace

std::optional<Reply> answer(FederationCore &core, const protocol::Frame &request, Clock::time_point now,
                            WatchRequest *watch) {
  bool parked = false;
  try {
    Reply reply = answer_now(core, request, now, watch, &parked);
    if (parked) return std::nullopt;
    return reply;
  } catch (const Error &error) {
    return failure(error);  // the core's refusal travels back; the connection stays usable
  }
}

Reply answer_watch(FederationCore &core, const WatchRequest &watch, Clock::time_point now) {
  try {
    if (core.changed_since(watch.prefix, watch.since, now)) return listing_reply(core, watch.prefix, now);
    PayloadWriter out;
    protocol::put_i64(out, core.revision());
    return {Type::Unchanged, out.take()};
  } catch (const Error &error) {
    return failure(error);
  }
}

}  // namespace xffl::federation
