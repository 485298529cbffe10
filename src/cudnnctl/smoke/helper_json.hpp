// SPDX-License-Identifier: Apache-2.0
// The smoke helper's output: one JSON object per line on stdout, flushed at once, so a crash
// never loses what was printed before it. No JSON library: the helper links nothing but libc,
// libdl and libstdc++.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace cudnnctl::smoke_helper {

// --- Interface ---

class JsonLine {
public:
  JsonLine& str(std::string_view key, std::string_view value) {
    this->key(key);
    quote(value);
    return *this;
  }
  JsonLine& num(std::string_view key, long long value) {
    this->key(key);
    m_text += std::to_string(value);
    return *this;
  }
  JsonLine& real(std::string_view key, double value) {
    this->key(key);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", value);
    m_text += buf;
    return *this;
  }
  JsonLine& boolean(std::string_view key, bool value) {
    this->key(key);
    m_text += value ? "true" : "false";
    return *this;
  }
  JsonLine& null(std::string_view key) {
    this->key(key);
    m_text += "null";
    return *this;
  }
  // Writes the object and a newline to stdout and flushes.
  void print() {
    m_text += "}\n";
    std::fputs(m_text.c_str(), stdout);
    std::fflush(stdout);
    m_text = "{";
  }

private:
  void key(std::string_view k) {
    if (m_text.size() > 1) {
      m_text += ", ";
    }
    quote(k);
    m_text += ": ";
  }
  // Bytes >= 0x80 are written as \u00XX (read as Latin-1): always valid JSON, even for
  // file names that are not UTF-8.
  void quote(std::string_view s) {
    m_text += '"';
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        m_text += '\\';
        m_text += static_cast<char>(c);
      } else if (c < 0x20 || c >= 0x80) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        m_text += buf;
      } else {
        m_text += static_cast<char>(c);
      }
    }
    m_text += '"';
  }
  std::string m_text = "{";
};

} // namespace cudnnctl::smoke_helper
