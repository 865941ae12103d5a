#include "bootstrap/env_read.h"

#include <strings.h>

#include "common/error.h"

namespace xffl::bootstrap::registry {

namespace {

const Variable &of_type(Var id, std::initializer_list<Type> types) {
  const Variable &v = variable(id);
  for (Type type : types)
    if (v.type == type) return v;
  fail(XFFL_EINTERNAL, v.name, " is a ", type_name(v.type), " variable, not read this way");
}

int parse_int(const Variable &v, const std::string &text) {
  switch (v.type) {
    case Type::Count: return parse_count(v.name, text, v.minimum);
    case Type::Port: return parse_port(v.name, text);
    case Type::Seconds: return parse_seconds_as_ms(v.name, text);
    case Type::Flag:
      if (text == "0" || text == "1") return text == "1" ? 1 : 0;
      fail(XFFL_EINVAL, v.name, "='", text, "' is not 0 or 1");
    case Type::Choice:
      for (const Choice &choice : v.choices)
        if (strcasecmp(text.c_str(), choice.name) == 0) return choice.value;
      fail(XFFL_EINVAL, v.name, "='", text, "' is not one of ", values_text(v));
    case Type::CountList:
    case Type::Text: break;
  }
  fail(XFFL_EINTERNAL, v.name, " is a ", type_name(v.type), " variable, not an integer");
}

std::string checked_text(const Variable &v, const char *name, const std::string &text) {
  if (v.max_length && text.size() > v.max_length)
    fail(XFFL_EINVAL, name, " has ", text.size(), " characters, more than the limit of ", v.max_length);
  return text;
}

}  // namespace

std::optional<std::string> read_raw(const Environment &environment, Var id) { return lookup(environment, name(id)); }

std::optional<Setting> read_setting(const Environment &environment, Var id) {
  const Variable &v = of_type(id, {Type::Count, Type::Port});
  std::optional<std::string> text = lookup(environment, v.name);
  if (!text) return std::nullopt;
  return Setting{parse_int(v, *text), v.name, ""};
}

std::optional<int> read_int(const Environment &environment, Var id) {
  const Variable &v = of_type(id, {Type::Count, Type::Port, Type::Seconds, Type::Choice, Type::Flag});
  std::optional<std::string> text = lookup(environment, v.name);
  if (!text) return std::nullopt;
  return parse_int(v, *text);
}

std::optional<std::string> read_text(const Environment &environment, Var id) {
  const Variable &v = of_type(id, {Type::Text});
  if (std::optional<std::string> text = lookup(environment, v.name)) return checked_text(v, v.name, *text);
  for (const char *fallback : v.fallbacks)
    if (std::optional<std::string> text = lookup(environment, fallback)) return checked_text(v, fallback, *text);
  return std::nullopt;
}

int default_int(Var id) {
  const Variable &v = variable(id);
  if (!v.default_value) fail(XFFL_EINTERNAL, v.name, " has no default value");
  return parse_int(v, v.default_value);
}

std::string default_string(Var id) {
  const Variable &v = of_type(id, {Type::Text});
  if (!v.default_value) fail(XFFL_EINTERNAL, v.name, " has no default value");
  return v.default_value;
}

}  // namespace xffl::bootstrap::registry
