// Checks run on every rank of a UCX test: each collective against the reference, throwing
// xffl::Error with the case when a result differs (the harness reports it on the main thread).
#ifndef XFFL_TESTS_UNIT_COMM_COLLECTIVE_CHECKS_H
#define XFFL_TESTS_UNIT_COMM_COLLECTIVE_CHECKS_H

#include <cstring>

#include "comm/communicator.h"
#include "comm/dtype.h"
#include "common/error.h"
#include "reference.h"

namespace checks {

using xffl::comm::Communicator;
using xffl::comm::dtype_name;
using xffl::comm::dtype_size;
using xffl::comm::redop_name;

const xffl_dtype_t kDtypes[] = {XFFL_F32, XFFL_F64, XFFL_F16, XFFL_BF16, XFFL_I8, XFFL_U8, XFFL_I32, XFFL_I64};
const xffl_redop_t kOps[] = {XFFL_SUM, XFFL_AVG, XFFL_MIN, XFFL_MAX, XFFL_PROD};

// index: my place in the group, n: its size. Data depend on the index only, so a group's
// reference is the same whatever global ranks it holds.
inline void allreduce(Communicator &comm, int index, int n, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                      bool in_place) {
  const reference::Bytes send = reference::make_input(index, count, dtype, op);
  reference::Bytes recv = in_place ? send : reference::Bytes(send.size(), 0xee);
  comm.allreduce(in_place ? recv.data() : send.data(), recv.data(), count, dtype, op, nullptr);
  if (recv != reference::reduced(n, count, dtype, op))
    (xffl::fail)(XFFL_EINTERNAL, "allreduce of ", count, " ", dtype_name(dtype), " ", redop_name(op),
               in_place ? " in place" : " out of place", " differs from the reference");
}

inline void reduce_scatter(Communicator &comm, int index, int n, size_t recv_count, xffl_dtype_t dtype,
                           xffl_redop_t op, bool in_place) {
  const size_t element = dtype_size(dtype);
  reference::Bytes send = reference::make_input(index, recv_count * n, dtype, op);
  reference::Bytes recv(recv_count * element, 0xee);
  unsigned char *mine = send.data() + static_cast<size_t>(index) * recv_count * element;
  comm.reduce_scatter(send.data(), in_place ? mine : recv.data(), recv_count, dtype, op, nullptr);
  if (in_place && recv_count) std::memcpy(recv.data(), mine, recv.size());
  if (recv != reference::reduced(n, recv_count, dtype, op, static_cast<size_t>(index) * recv_count))
    (xffl::fail)(XFFL_EINTERNAL, "reduce_scatter of ", recv_count, " ", dtype_name(dtype), " ", redop_name(op),
               in_place ? " in place" : " out of place", " differs from the reference");
}

inline void allgather(Communicator &comm, int index, int n, size_t count, xffl_dtype_t dtype, bool in_place) {
  const reference::Bytes mine = reference::make_input(index, count, dtype, XFFL_SUM);
  reference::Bytes all(mine.size() * n, 0xee);
  unsigned char *my_block = all.data() + mine.size() * index;
  if (in_place && count) std::memcpy(my_block, mine.data(), mine.size());
  comm.allgather(in_place ? my_block : mine.data(), all.data(), count, dtype, nullptr);
  reference::Bytes expected;
  for (int m = 0; m < n; ++m) {
    const reference::Bytes block = reference::make_input(m, count, dtype, XFFL_SUM);
    expected.insert(expected.end(), block.begin(), block.end());
  }
  if (all != expected)
    (xffl::fail)(XFFL_EINTERNAL, "allgather of ", count, " ", dtype_name(dtype), in_place ? " in place" : "",
               " differs from the reference");
}

inline void broadcast(Communicator &comm, int index, size_t count, xffl_dtype_t dtype, int root) {
  reference::Bytes buffer = reference::make_input(index == root ? 1000 : index, count, dtype, XFFL_SUM);
  comm.broadcast(buffer.data(), count, dtype, root, nullptr);
  if (buffer != reference::make_input(1000, count, dtype, XFFL_SUM))
    (xffl::fail)(XFFL_EINTERNAL, "broadcast of ", count, " ", dtype_name(dtype), " from index ", root,
               " differs from the root's data");
}

// Every collective, dtype, op and placement at the given counts.
inline void full_matrix(Communicator &comm, int index, int n, const std::vector<size_t> &counts) {
  for (size_t count : counts)
    for (xffl_dtype_t dtype : kDtypes) {
      for (xffl_redop_t op : kOps)
        for (bool in_place : {false, true}) {
          allreduce(comm, index, n, count, dtype, op, in_place);
          reduce_scatter(comm, index, n, count, dtype, op, in_place);
        }
      for (bool in_place : {false, true}) allgather(comm, index, n, count, dtype, in_place);
      for (int root = 0; root < n; ++root) broadcast(comm, index, count, dtype, root);
      comm.barrier();
    }
}

}  // namespace checks

#endif
