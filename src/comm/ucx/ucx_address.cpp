#include "comm/ucx/ucx_address.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace xffl::comm::ucx {

namespace {

void put_u16_prefixed(std::vector<uint8_t> &value, const std::string &text) {
  const size_t length = std::min<size_t>(text.size(), 0xffff);
  value.push_back(static_cast<uint8_t>(length & 0xff));
  value.push_back(static_cast<uint8_t>(length >> 8));
  value.insert(value.end(), text.begin(), text.begin() + static_cast<long>(length));
}

// Reads [u16 length][bytes] at offset; false when value is too short.
bool take_u16_prefixed(const std::vector<uint8_t> &value, size_t &offset, std::string &text) {
  if (value.size() < offset + 2) return false;
  const size_t length = value[offset] | static_cast<size_t>(value[offset + 1]) << 8;
  if (value.size() < offset + 2 + length) return false;
  text.assign(value.begin() + static_cast<long>(offset + 2), value.begin() + static_cast<long>(offset + 2 + length));
  offset += 2 + length;
  return true;
}

}  // namespace

std::string address_key(int rank, bool crossing) {
  return (crossing ? "ucx/crossing/addr/" : "ucx/addr/") + std::to_string(rank);
}

std::string host_identity() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string identity = name;
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (boot_id >> id) identity += "/" + id;
  return identity;
}

std::vector<uint8_t> encode_address(const std::string &host, const ProcessIdentity &process, const void *address,
                                    size_t length) {
  std::vector<uint8_t> value;
  put_u16_prefixed(value, host);
  put_u16_prefixed(value, encode_process(process));
  const auto *bytes = static_cast<const uint8_t *>(address);
  value.insert(value.end(), bytes, bytes + length);
  return value;
}

PublishedAddress decode_address(const std::vector<uint8_t> &value) {
  PublishedAddress decoded;
  size_t offset = 0;
  std::string host, process;
  if (!take_u16_prefixed(value, offset, host) || !take_u16_prefixed(value, offset, process)) return decoded;
  decoded.host = host;
  decoded.process = decode_process(process);
  decoded.worker_address.assign(value.begin() + static_cast<long>(offset), value.end());
  return decoded;
}

}  // namespace xffl::comm::ucx
