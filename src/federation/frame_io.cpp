#include "federation/frame_io.h"

namespace xffl::federation {

namespace net = bootstrap::net;

net::IoResult send_frame(int fd, protocol::Type type, const std::vector<uint8_t> &payload,
                         net::Clock::time_point deadline) {
  std::vector<uint8_t> bytes = protocol::encode_frame(type, payload);
  return net::send_all(fd, bytes.data(), bytes.size(), deadline);
}

net::IoResult receive_frame(int fd, protocol::FrameReader &reader, net::Clock::time_point deadline,
                            protocol::Frame *out) {
  for (;;) {
    if (std::optional<protocol::Frame> frame = reader.next()) {
      *out = std::move(*frame);
      return {};
    }
    uint8_t buffer[65536];
    net::IoResult got = net::receive_some(fd, buffer, sizeof buffer, deadline);
    if (got.kind != net::IoResult::Ok) return got;
    reader.feed(buffer, got.bytes);
  }
}

}  // namespace xffl::federation
