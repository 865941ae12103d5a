// Copying results into caller buffers with the EBUFSIZE convention: a NULL buffer with a non-zero
// capacity is refused first (naming it); then the required length is written to *len, and the buffer
// only when it is large enough.
#ifndef XFFL_SRC_CAPI_COPY_OUT_H
#define XFFL_SRC_CAPI_COPY_OUT_H

#include <cstddef>
#include <string>
#include <vector>

namespace xffl::capi {

// Elements: needs cap >= values.size().
void copy_out(const std::vector<int> &values, int *buf, size_t cap, size_t *len, const char *what,
              const char *buf_name = "buf");

// Text: needs cap > text.size() (room for the NUL).
void copy_out(const std::string &text, char *buf, size_t cap, size_t *len, const char *what);

}  // namespace xffl::capi

#endif
