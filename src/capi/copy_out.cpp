#include "capi/copy_out.h"

#include <cstring>

#include "common/error.h"

namespace xffl::capi {

void copy_out(const std::vector<int> &values, int *buf, size_t cap, size_t *len, const char *what,
              const char *buf_name) {
  if (!len) fail(XFFL_EINVAL, "len is NULL");
  if (!buf && cap > 0) fail(XFFL_EINVAL, buf_name, " is NULL with capacity ", cap);
  *len = values.size();
  if (cap < values.size()) fail(XFFL_EBUFSIZE, what, " has ", values.size(), " elements, ", buf_name, " holds ", cap);
  if (!values.empty()) std::memcpy(buf, values.data(), values.size() * sizeof(int));
}

void copy_out(const std::string &text, char *buf, size_t cap, size_t *len, const char *what) {
  if (!len) fail(XFFL_EINVAL, "len is NULL");
  if (!buf && cap > 0) fail(XFFL_EINVAL, "buf is NULL with capacity ", cap);
  *len = text.size();
  if (cap <= text.size())
    fail(XFFL_EBUFSIZE, what, " needs ", text.size() + 1, " bytes with the NUL, buf holds ", cap);
  std::memcpy(buf, text.c_str(), text.size() + 1);
}

}  // namespace xffl::capi
