// The wire format of what a rank publishes for its peers under address_key(rank): the host it runs
// on, which process it is there, and its UCX worker address. Pure bytes, no UCX call: the decoder
// meets whatever a store hands back, so it never reads past the end and says when bytes are malformed.
#ifndef XFFL_SRC_COMM_UCX_UCX_ADDRESS_H
#define XFFL_SRC_COMM_UCX_UCX_ADDRESS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/ucx/process_identity.h"

namespace xffl::comm::ucx {

// "ucx/addr/<rank>": the Exchange key of a rank's published address; "ucx/crossing/addr/<rank>" for
// the worker of a UCX crossing backend (UcxSettings::crossing), which shares the job's store with the
// main UCX backend's.
std::string address_key(int rank, bool crossing = false);

struct PublishedAddress {
  std::string host;  // host_identity() of the rank that published it
  ProcessIdentity process;
  std::vector<uint8_t> worker_address;
};

// Host name and kernel boot id: equal for processes that can share memory, different across
// machines even when containers reuse host names.
std::string host_identity();

// [u16 length][host] [u16 length][encode_process(process), may be empty] [worker address bytes].
// A host longer than 65535 bytes is cut to that length.
std::vector<uint8_t> encode_address(const std::string &host, const ProcessIdentity &process, const void *address,
                                    size_t length);
// The fields of encode_address's bytes; an empty worker_address when they are malformed (too short
// for a length field or for the text it announces, or no worker address after them).
PublishedAddress decode_address(const std::vector<uint8_t> &value);

}  // namespace xffl::comm::ucx

#endif
