// SPDX-License-Identifier: Apache-2.0
#include "util/toml.hpp"

#include "util/strings.hpp"

#include <cctype>

namespace cudnnctl::util {

namespace {

struct Parser {
  std::string_view s;
  size_t pos = 0;

  void skip_ws() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) {
      ++pos;
    }
  }
  bool at_end_or_comment() {
    skip_ws();
    return pos >= s.size() || s[pos] == '#';
  }
};

Result<std::string> parse_string(Parser& p) {
  // p.s[p.pos] == '"'
  ++p.pos;
  std::string out;
  while (p.pos < p.s.size()) {
    char c = p.s[p.pos++];
    if (c == '"') {
      return out;
    }
    if (c == '\\') {
      if (p.pos >= p.s.size()) {
        break;
      }
      char e = p.s[p.pos++];
      switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      default:
        return fail(ErrorCode::usage, std::string("unsupported escape \\") + e);
      }
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      return fail(ErrorCode::usage, "control character in string");
    }
    out += c;
  }
  return fail(ErrorCode::usage, "unterminated string");
}

Result<TomlValue> parse_value(Parser& p) {
  p.skip_ws();
  if (p.pos >= p.s.size()) {
    return fail(ErrorCode::usage, "missing value");
  }
  char c = p.s[p.pos];
  if (c == '"') {
    TRY_ASSIGN(std::string str, parse_string(p));
    return TomlValue(std::move(str));
  }
  if (c == '[') {
    ++p.pos;
    std::vector<std::string> items;
    while (true) {
      p.skip_ws();
      if (p.pos < p.s.size() && p.s[p.pos] == ']') {
        ++p.pos;
        return TomlValue(std::move(items));
      }
      if (p.pos >= p.s.size() || p.s[p.pos] != '"') {
        return fail(ErrorCode::usage, "arrays may only hold strings, on one line");
      }
      TRY_ASSIGN(std::string item, parse_string(p));
      items.push_back(std::move(item));
      p.skip_ws();
      if (p.pos < p.s.size() && p.s[p.pos] == ',') {
        ++p.pos;
      } else if (p.pos >= p.s.size() || p.s[p.pos] != ']') {
        return fail(ErrorCode::usage, "expected ',' or ']' in array");
      }
    }
  }
  size_t start = p.pos;
  while (p.pos < p.s.size() && p.s[p.pos] != ' ' && p.s[p.pos] != '\t' && p.s[p.pos] != '#') {
    ++p.pos;
  }
  std::string_view word = p.s.substr(start, p.pos - start);
  if (word == "true") {
    return TomlValue(true);
  }
  if (word == "false") {
    return TomlValue(false);
  }
  bool negative = !word.empty() && word[0] == '-';
  std::string_view digits = negative ? word.substr(1) : word;
  if (auto n = parse_u64(digits); n && *n <= static_cast<uint64_t>(INT64_MAX)) {
    auto v = static_cast<int64_t>(*n);
    return TomlValue(negative ? -v : v);
  }
  return fail(ErrorCode::usage, "invalid value \"" + std::string(word) +
                                    "\" (expected a \"string\", an integer, true/false or "
                                    "[\"array\", \"of strings\"])");
}

} // namespace

Result<std::map<std::string, TomlEntry>> parse_toml(std::string_view text,
                                                    std::string_view source) {
  std::map<std::string, TomlEntry> out;
  auto lines = split(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    int lineno = static_cast<int>(i + 1);
    auto where = std::string(source) + ":" + std::to_string(lineno) + ": ";
    Parser p{lines[i]};
    if (p.at_end_or_comment()) {
      continue;
    }
    if (p.s[p.pos] == '[') {
      return fail(ErrorCode::usage, where + "tables are not supported; write top-level keys");
    }
    size_t start = p.pos;
    while (p.pos < p.s.size() && (std::isalnum(static_cast<unsigned char>(p.s[p.pos])) ||
                                  p.s[p.pos] == '_' || p.s[p.pos] == '-')) {
      ++p.pos;
    }
    std::string key(p.s.substr(start, p.pos - start));
    if (key.empty()) {
      return fail(ErrorCode::usage, where + "expected key = value");
    }
    p.skip_ws();
    if (p.pos >= p.s.size() || p.s[p.pos] != '=') {
      return fail(ErrorCode::usage, where + "expected '=' after " + key);
    }
    ++p.pos;
    auto value = parse_value(p);
    if (!value) {
      return fail(ErrorCode::usage, where + value.error().message);
    }
    if (!p.at_end_or_comment()) {
      return fail(ErrorCode::usage, where + "unexpected text after the value of " + key);
    }
    if (out.count(key)) {
      return fail(ErrorCode::usage, where + "duplicate key " + key);
    }
    out[key] = TomlEntry{std::move(*value), lineno};
  }
  return out;
}

} // namespace cudnnctl::util
