#include "federation/json.h"

#include <openssl/evp.h>

#include <cstdio>
#include <stdexcept>

namespace xffl::federation::json {

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(const std::string &text) : text_(text) {}

  Value document() {
    Value value = parse_value(0);
    skip_space();
    if (at_ != text_.size()) error("end of the document");
    return value;
  }

 private:
  [[noreturn]] void error(const char *expected) const {
    throw std::runtime_error("JSON: expected " + std::string(expected) + " at offset " + std::to_string(at_));
  }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t'))
      ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  bool take_word(const char *word) {
    std::string w(word);
    if (text_.compare(at_, w.size(), w) != 0) return false;
    at_ += w.size();
    return true;
  }

  Value parse_value(int depth) {
    if (depth > kMaxDepth) error("at most 64 levels of nesting");
    skip_space();
    if (at_ >= text_.size()) error("a value");
    Value value;
    char c = text_[at_];
    if (c == '{') {
      ++at_;
      value.kind = Value::Kind::Object;
      if (take('}')) return value;
      do {
        skip_space();
        if (at_ >= text_.size() || text_[at_] != '"') error("a member name");
        std::string name = parse_string();
        if (!take(':')) error("':'");
        value.members[name] = parse_value(depth + 1);
      } while (take(','));
      if (!take('}')) error("',' or '}'");
    } else if (c == '[') {
      ++at_;
      value.kind = Value::Kind::Array;
      if (take(']')) return value;
      do value.items.push_back(parse_value(depth + 1));
      while (take(','));
      if (!take(']')) error("',' or ']'");
    } else if (c == '"') {
      value.kind = Value::Kind::String;
      value.text = parse_string();
    } else if (take_word("true")) {
      value.kind = Value::Kind::Bool;
      value.boolean = true;
    } else if (take_word("false")) {
      value.kind = Value::Kind::Bool;
    } else if (take_word("null")) {
      value.kind = Value::Kind::Null;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      value.kind = Value::Kind::Number;
      size_t start = at_;
      while (at_ < text_.size() && std::string("+-0123456789.eE").find(text_[at_]) != std::string::npos) ++at_;
      value.text = text_.substr(start, at_ - start);
    } else {
      error("a value");
    }
    return value;
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  std::string parse_string() {
    ++at_;  // the opening quote
    std::string out;
    while (true) {
      if (at_ >= text_.size()) error("the end of a string");
      char c = text_[at_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) error("an escape");
      char e = text_[at_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (at_ + 4 > text_.size()) error("four hex digits");
          unsigned code = 0;
          for (int i = 0; i < 4; ++i) {
            int digit = hex(text_[at_++]);
            if (digit < 0) error("a hex digit");
            code = code * 16 + static_cast<unsigned>(digit);
          }
          // Messages only (keys and values travel as base64): surrogate pairs become two 3-byte
          // sequences, which is good enough for reading an error's words.
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default: error("a valid escape");
      }
    }
  }

  const std::string &text_;
  size_t at_ = 0;
};

}  // namespace

const Value *Value::find(const std::string &name) const {
  if (kind != Kind::Object) return nullptr;
  auto it = members.find(name);
  return it == members.end() ? nullptr : &it->second;
}

int64_t Value::as_int64(int64_t fallback) const {
  if ((kind != Kind::Number && kind != Kind::String) || text.empty()) return fallback;
  try {
    size_t used = 0;
    long long value = std::stoll(text, &used);
    return used == text.size() ? value : fallback;
  } catch (const std::exception &) {
    return fallback;
  }
}

Value parse(const std::string &text) { return Parser(text).document(); }

std::string quote(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string base64(const std::string &bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int written = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                                reinterpret_cast<const unsigned char *>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(written));
  return out;
}

std::string unbase64(const std::string &text) {
  if (text.size() % 4 != 0) throw std::runtime_error("base64 text of " + std::to_string(text.size()) + " characters");
  std::string out(3 * (text.size() / 4) + 1, '\0');
  int written = EVP_DecodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                                reinterpret_cast<const unsigned char *>(text.data()), static_cast<int>(text.size()));
  if (written < 0) throw std::runtime_error("text that is not base64");
  // EVP_DecodeBlock counts the padding as zero bytes: drop one per '='.
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : 1;
  out.resize(static_cast<size_t>(written) - padding);
  return out;
}

}  // namespace xffl::federation::json
