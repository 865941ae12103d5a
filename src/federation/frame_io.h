// Sending and receiving whole federation frames on a non-blocking socket, each bounded by a deadline.
#ifndef XFFL_SRC_FEDERATION_FRAME_IO_H
#define XFFL_SRC_FEDERATION_FRAME_IO_H

#include "bootstrap/socket.h"
#include "federation/federation_protocol.h"

namespace xffl::federation {

bootstrap::net::IoResult send_frame(int fd, protocol::Type type, const std::vector<uint8_t> &payload,
                                    bootstrap::net::Clock::time_point deadline);
// Ok with *out set, or why not; throws bootstrap::wire::ProtocolError for a malformed frame.
bootstrap::net::IoResult receive_frame(int fd, protocol::FrameReader &reader, bootstrap::net::Clock::time_point deadline,
                                       protocol::Frame *out);

}  // namespace xffl::federation

#endif
