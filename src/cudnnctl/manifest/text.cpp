// SPDX-License-Identifier: Apache-2.0
#include "manifest/text.hpp"

#include <cstdio>

namespace cudnnctl::manifest::detail {

std::string quote(std::string_view s, size_t max) {
  std::string out = "\"";
  size_t n = s.size() < max ? s.size() : max;
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (s.size() > max) {
    out += "... (" + std::to_string(s.size()) + " bytes)";
  }
  return out;
}

std::string a_or_an(std::string_view noun) {
  bool vowel = !noun.empty() && std::string_view("aeiou").find(noun[0]) != std::string_view::npos;
  return std::string(vowel ? "an " : "a ") + std::string(noun);
}

std::string printable(std::string_view s) {
  if (s.empty() || s.size() > 64) {
    return quote(s);
  }
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      return quote(s);
    }
  }
  return std::string(s);
}

bool is_plain_name(std::string_view s, size_t max_size) {
  if (s.empty() || s.size() > max_size || s == "." || s == "..") {
    return false;
  }
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '+' || c == '~' || c == '-';
    if (!ok) {
      return false;
    }
  }
  return true;
}

} // namespace cudnnctl::manifest::detail
