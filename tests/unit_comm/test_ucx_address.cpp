// The wire format of a UCX rank's published address (comm/ucx/ucx_address.h), without UCX: every
// field round trips; an unknown process identity travels as nothing; bytes cut anywhere before the
// worker address, a length field that announces more bytes than follow, and a blob with no worker
// address are malformed (empty worker address), and never read past their end; the key names the rank.
#include <string>
#include <vector>

#include "comm/ucx/process_identity.h"
#include "comm/ucx/ucx_address.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using xffl::comm::ucx::decode_address;
using xffl::comm::ucx::encode_address;
using xffl::comm::ucx::ProcessIdentity;

const uint8_t kWorkerAddress[] = {1, 2, 3, 0, 255};

void published_address_round_trips(void **) {
  const ProcessIdentity self = xffl::comm::ucx::this_process();
  assert_true(self.known());
  const auto blob = encode_address("host/boot", self, kWorkerAddress, sizeof kWorkerAddress);
  const auto decoded = decode_address(blob);
  assert_string_equal(decoded.host.c_str(), "host/boot");
  assert_string_equal(decoded.process.pid_namespace.c_str(), self.pid_namespace.c_str());
  assert_int_equal(decoded.process.pid, self.pid);
  assert_true(decoded.process.start_ticks == self.start_ticks);
  assert_false(self.network_namespace.empty());
  assert_string_equal(decoded.process.network_namespace.c_str(), self.network_namespace.c_str());
  assert_int_equal(decoded.worker_address.size(), sizeof kWorkerAddress);
  assert_memory_equal(decoded.worker_address.data(), kWorkerAddress, sizeof kWorkerAddress);
}

void an_unknown_process_travels_as_nothing(void **) {
  const auto blob = encode_address("h", ProcessIdentity(), kWorkerAddress, sizeof kWorkerAddress);
  // [1 0 'h'] [0 0] [worker address]: the empty process field costs its length only.
  assert_int_equal(blob.size(), 3 + 2 + sizeof kWorkerAddress);
  const auto decoded = decode_address(blob);
  assert_string_equal(decoded.host.c_str(), "h");
  assert_false(decoded.process.known());
  assert_int_equal(decoded.worker_address.size(), sizeof kWorkerAddress);
}

void bytes_cut_before_the_worker_address_are_malformed(void **) {
  const auto blob = encode_address("host/boot", xffl::comm::ucx::this_process(), kWorkerAddress,
                                   sizeof kWorkerAddress);
  const size_t header = blob.size() - sizeof kWorkerAddress;
  for (size_t length = 0; length <= header; ++length) {
    const std::vector<uint8_t> cut(blob.begin(), blob.begin() + static_cast<long>(length));
    if (!decode_address(cut).worker_address.empty()) fail_msg("%zu of %zu bytes decoded as an address", length, blob.size());
  }
  // One byte of worker address is enough to be taken: the format does not know its length.
  const std::vector<uint8_t> one_more(blob.begin(), blob.begin() + static_cast<long>(header + 1));
  assert_int_equal(decode_address(one_more).worker_address.size(), 1);
}

void a_length_past_the_end_is_malformed(void **) {
  // The host's length says 300 bytes; 10 follow.
  std::vector<uint8_t> host_too_long = {300 & 0xff, 300 >> 8};
  host_too_long.insert(host_too_long.end(), 10, 'x');
  assert_true(decode_address(host_too_long).worker_address.empty());
  assert_true(decode_address(host_too_long).host.empty());
  // A well-formed host, then a process field announcing 0xffff bytes.
  std::vector<uint8_t> process_too_long = {1, 0, 'h', 0xff, 0xff, 'p', 1, 2, 3};
  assert_true(decode_address(process_too_long).worker_address.empty());
}

void a_host_longer_than_the_length_field_is_cut(void **) {
  const std::string host(0x10000 + 7, 'h');
  const auto decoded = decode_address(encode_address(host, ProcessIdentity(), kWorkerAddress, sizeof kWorkerAddress));
  assert_int_equal(decoded.host.size(), 0xffff);
  assert_int_equal(decoded.worker_address.size(), sizeof kWorkerAddress);
  assert_memory_equal(decoded.worker_address.data(), kWorkerAddress, sizeof kWorkerAddress);
}

void a_process_field_that_is_not_an_identity_decodes_as_unknown(void **) {
  std::vector<uint8_t> blob = {1, 0, 'h', 5, 0, 'p', 'i', 'd', ' ', 'x', 7};
  const auto decoded = decode_address(blob);
  assert_false(decoded.process.known());
  assert_int_equal(decoded.worker_address.size(), 1);
}

void the_key_names_the_rank(void **) {
  assert_string_equal(xffl::comm::ucx::address_key(0).c_str(), "ucx/addr/0");
  assert_string_equal(xffl::comm::ucx::address_key(4095).c_str(), "ucx/addr/4095");
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(published_address_round_trips),
      cmocka_unit_test(an_unknown_process_travels_as_nothing),
      cmocka_unit_test(bytes_cut_before_the_worker_address_are_malformed),
      cmocka_unit_test(a_length_past_the_end_is_malformed),
      cmocka_unit_test(a_host_longer_than_the_length_field_is_cut),
      cmocka_unit_test(a_process_field_that_is_not_an_identity_decodes_as_unknown),
      cmocka_unit_test(the_key_names_the_rank),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
