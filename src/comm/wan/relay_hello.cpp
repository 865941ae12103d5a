#include "comm/wan/relay_hello.h"

#include <cstring>

#include "comm/wan/framing.h"

namespace xffl::comm::wan {

namespace {

bool below_2_31(uint64_t value) { return value < (uint64_t{1} << 31); }

bool refuse(std::string *why, const std::string &text) {
  if (why) *why = text;
  return false;
}

}  // namespace

RelayHelloBytes encode_relay_hello(const RelayHello &hello) {
  RelayHelloBytes out{};
  uint8_t *p = out.data();
  put_le(p, kRelayMagic, 8);
  put_le(p + 8, static_cast<uint32_t>(hello.side), 4);
  put_le(p + 12, hello.caller, 4);
  put_le(p + 16, hello.owner, 4);
  put_le(p + 20, hello.tag, 8);
  put_le(p + 28, hello.serial, 8);
  put_le(p + 36, hello.stream, 4);
  put_le(p + 40, hello.streams, 4);
  std::memcpy(p + 44, hello.job.data(), hello.job.size());
  return out;
}

std::optional<RelayHello> decode_relay_hello(const uint8_t *p, std::string *why) {
  if (get_le(p, 8) != kRelayMagic) {
    refuse(why, "not an xffl-relay hello (magic)");
    return std::nullopt;
  }
  const uint64_t side = get_le(p + 8, 4);
  RelayHello hello;
  hello.caller = static_cast<uint32_t>(get_le(p + 12, 4));
  hello.owner = static_cast<uint32_t>(get_le(p + 16, 4));
  hello.tag = get_le(p + 20, 8);
  hello.serial = get_le(p + 28, 8);
  hello.stream = static_cast<uint32_t>(get_le(p + 36, 4));
  hello.streams = static_cast<uint32_t>(get_le(p + 40, 4));
  std::memcpy(hello.job.data(), p + 44, hello.job.size());
  bool ok = true;
  if (side > 1)
    ok = refuse(why, "side " + std::to_string(side) + " is neither caller (0) nor owner (1)");
  else if (!below_2_31(hello.caller) || !below_2_31(hello.owner))
    ok = refuse(why, "rank " + std::to_string(std::max(hello.caller, hello.owner)) + " is not below 2^31");
  else if (hello.caller == hello.owner)
    ok = refuse(why, "caller and owner are both rank " + std::to_string(hello.caller));
  else if (hello.streams == 0 || hello.streams > kRelayMaxStreams)
    ok = refuse(why, std::to_string(hello.streams) + " streams is outside [1, " + std::to_string(kRelayMaxStreams) + "]");
  else if (hello.stream >= hello.streams)
    ok = refuse(why, "stream " + std::to_string(hello.stream) + " is not below " + std::to_string(hello.streams) +
                         " streams");
  if (!ok) return std::nullopt;
  hello.side = static_cast<RelaySide>(side);
  return hello;
}

std::array<uint8_t, kRelayReplyBytes> encode_relay_reply(RelayStatus status, uint32_t seconds) {
  std::array<uint8_t, kRelayReplyBytes> out{};
  put_le(out.data(), static_cast<uint32_t>(status), 4);
  put_le(out.data() + 4, seconds, 4);
  return out;
}

bool decode_relay_reply(const uint8_t *bytes, RelayStatus *status, uint32_t *seconds) {
  const uint64_t value = get_le(bytes, 4);
  if (value > static_cast<uint32_t>(RelayStatus::kFull)) return false;
  *status = static_cast<RelayStatus>(value);
  *seconds = static_cast<uint32_t>(get_le(bytes + 4, 4));
  return true;
}

const char *relay_status_text(RelayStatus status) {
  switch (status) {
    case RelayStatus::kPaired: return "paired";
    case RelayStatus::kDuplicate: return "refused: a connection for the same stream is already waiting there";
    case RelayStatus::kUnpaired: return "dropped: the other side did not come within the relay's pair timeout";
    case RelayStatus::kFull: return "refused: the relay holds its maximum of connections";
  }
  return "unknown";
}

bool split_host_port(const std::string &text, bool allow_zero, std::string *host, int *port, std::string *why) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return refuse(why, "'" + text + "' is not HOST:PORT");
  std::string name = text.substr(0, colon);
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') name = name.substr(1, name.size() - 2);
  if (name.find_first_of(" \t\r\n") != std::string::npos) return refuse(why, "'" + text + "': the host has a space");
  const std::string digits = text.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos)
    return refuse(why, "'" + text + "': the port '" + digits + "' is not a number");
  const int value = std::stoi(digits);
  if (value > 65535 || (value == 0 && !allow_zero))
    return refuse(why, "'" + text + "': port " + digits + " is outside [" + (allow_zero ? "0" : "1") + ", 65535]");
  *host = name;
  *port = value;
  return true;
}

}  // namespace xffl::comm::wan
