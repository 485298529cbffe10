// SPDX-License-Identifier: Apache-2.0
#include "smoke/json_lines.hpp"

#include "util/strings.hpp"

#include <nlohmann/json.hpp>

namespace cudnnctl::smoke {

using nlohmann::json;

std::vector<json> json_lines(const std::string& out) {
  std::vector<json> lines;
  for (const auto& raw : util::split(out, '\n')) {
    auto text = util::trim(raw);
    if (text.empty()) {
      continue;
    }
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded() && j.is_object()) {
      lines.push_back(std::move(j));
    }
  }
  return lines;
}

std::string str_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<long> long_of(const json& j, const char* key) {
  auto it = j.find(key);
  if (it != j.end() && it->is_number_integer()) {
    return it->get<long>();
  }
  return std::nullopt;
}

std::optional<double> number_of(const json& j, const char* key) {
  auto it = j.find(key);
  if (it != j.end() && it->is_number()) {
    return it->get<double>();
  }
  return std::nullopt;
}

std::string last_line(const std::string& text) {
  auto lines = util::split(text, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    auto t = util::trim(*it);
    if (!t.empty()) {
      return std::string(t.substr(0, 300));
    }
  }
  return {};
}

} // namespace cudnnctl::smoke
