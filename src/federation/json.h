// The little JSON that etcd's v3 gateway speaks: a parser into a tree, bounded in depth and size, and
// a string escaper for the requests. Numbers are kept as their text (etcd writes int64 as strings,
// and some as bare numbers; both read with as_int64).
#ifndef XFFL_SRC_FEDERATION_JSON_H
#define XFFL_SRC_FEDERATION_JSON_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace xffl::federation::json {

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  bool boolean = false;
  std::string text;  // Number's digits or String's decoded bytes
  std::vector<Value> items;
  std::map<std::string, Value> members;

  // Member `name` of an object, or nullptr (also when this is not an object).
  const Value *find(const std::string &name) const;
  // A Number, or a String holding an integer (etcd's int64); `fallback` when absent or null.
  int64_t as_int64(int64_t fallback = 0) const;
};

// Throws std::runtime_error with the offset and what was expected; depth at most 64.
Value parse(const std::string &text);

// "text" with quotes, escapes for '"', '\\' and control characters.
std::string quote(const std::string &text);

// Base64 of bytes, and back (throws std::runtime_error for text that is not base64).
std::string base64(const std::string &bytes);
std::string unbase64(const std::string &text);

}  // namespace xffl::federation::json

#endif
