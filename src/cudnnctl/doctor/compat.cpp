// SPDX-License-Identifier: Apache-2.0
#include "doctor/compat.hpp"

#include "util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace cudnnctl::doctor {

using nlohmann::json;

namespace {

// The next dotted component of `s` from `pos` (leading digits only: "04" -> 4, "0-1" -> 0);
// 0 past the end. Advances `pos` past the following '.'.
uint64_t next_component(std::string_view s, size_t& pos) {
  uint64_t n = 0;
  bool digits = true;
  while (pos < s.size() && s[pos] != '.') {
    char c = s[pos++];
    if (digits && c >= '0' && c <= '9') {
      n = n * 10 + static_cast<uint64_t>(c - '0');
    } else {
      digits = false;
    }
  }
  if (pos < s.size()) {
    ++pos; // the '.'
  }
  return n;
}

std::vector<uint64_t> components(std::string_view v) {
  std::vector<uint64_t> out;
  size_t pos = 0;
  while (pos < v.size()) {
    out.push_back(next_component(v, pos));
  }
  return out;
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace

int compare_versions(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    uint64_t x = next_component(a, i);
    uint64_t y = next_component(b, j);
    if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  return 0;
}

bool version_rule_ok(std::string_view built, std::string_view runtime) {
  if (built.empty() || runtime.empty()) {
    return false;
  }
  size_t b = 0, r = 0;
  if (next_component(built, b) != next_component(runtime, r)) {
    return false;
  }
  if (b >= built.size()) {
    return true; // built for a major only
  }
  if (r >= runtime.size()) {
    return false;
  }
  return next_component(runtime, r) >= next_component(built, b);
}

std::string canonical_framework(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  std::replace(n.begin(), n.end(), '_', '-');
  if (n == "pytorch") {
    return "torch";
  }
  if (n == "tf" || n == "tensorflow-gpu" || n == "tensorflow-cpu") {
    return "tensorflow";
  }
  return n;
}

const FrameworkRow* Compat::framework(std::string_view name, std::string_view version) const {
  std::string canon = canonical_framework(name);
  auto v = components(version);
  v.resize(2, 0);
  std::string mm = std::to_string(v[0]) + "." + std::to_string(v[1]);
  for (const auto& row : frameworks) {
    if (row.framework == canon && compare_versions(mm, row.min) >= 0 &&
        compare_versions(mm, row.max) <= 0) {
      return &row;
    }
  }
  return nullptr;
}

const DriverRow* Compat::driver_minimum(int cuda_major) const {
  for (const auto& d : drivers) {
    if (d.cuda_major == cuda_major) {
      return &d;
    }
  }
  return nullptr;
}

std::optional<bool> Compat::supports_cc(std::string_view release_version,
                                        std::string_view cc) const {
  for (const auto& row : compute) {
    if (compare_versions(release_version, row.cudnn_min) < 0) {
      continue;
    }
    if (row.cudnn_max && compare_versions(release_version, *row.cudnn_max) > 0) {
      continue;
    }
    for (const auto& s : row.supported) {
      if (compare_versions(s, cc) == 0) {
        return true;
      }
    }
    return false;
  }
  return std::nullopt;
}

const WorkloadRow* Compat::workload(std::string_view name_or_alias) const {
  std::string n(name_or_alias);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& w : workloads) {
    if (w.name == n || std::find(w.aliases.begin(), w.aliases.end(), n) != w.aliases.end()) {
      return &w;
    }
  }
  return nullptr;
}

Result<Compat> parse_compat(std::string_view compat_json, std::string_view releases_json) {
  Compat c;
  try {
    json j = json::parse(compat_json);
    c.version_rule_source = str(j.at("version_rule"), "source");
    for (const auto& r : j.at("frameworks")) {
      FrameworkRow row{str(r, "framework"),
                       str(r, "min"),
                       str(r, "max"),
                       str(r, "cudnn"),
                       r.at("cuda").get<std::vector<int>>(),
                       str(r, "cuda_version"),
                       str(r, "pin"),
                       str(r, "source")};
      if (row.framework.empty() || row.min.empty() || row.max.empty() || row.cudnn.empty() ||
          row.source.empty()) {
        return fail(ErrorCode::usage, "compat.json: a framework row lacks a field or its source");
      }
      c.frameworks.push_back(std::move(row));
    }
    for (const auto& r : j.at("driver_minimum")) {
      c.drivers.push_back({r.at("cuda_major").get<int>(), str(r, "linux"), str(r, "source")});
    }
    for (const auto& r : j.at("compute_capability")) {
      CcRow row{str(r, "cudnn_min"), std::nullopt,
                r.at("supported").get<std::vector<std::string>>(), str(r, "source")};
      if (r.contains("cudnn_max") && r.at("cudnn_max").is_string()) {
        row.cudnn_max = r.at("cudnn_max").get<std::string>();
      }
      c.compute.push_back(std::move(row));
    }
    for (const auto& r : j.at("workloads")) {
      c.workloads.push_back({str(r, "name"), r.at("aliases").get<std::vector<std::string>>(),
                             r.at("major").get<int>(), str(r, "label"), str(r, "why"),
                             str(r, "source")});
    }
  } catch (const json::exception& e) {
    return fail(ErrorCode::usage, std::string("compat.json: ") + e.what());
  }
  try {
    json j = json::parse(releases_json);
    for (const auto& r : j.at("releases")) {
      ReleaseRow row{
          str(r, "label"), str(r, "version"), str(r, "date"), r.value("pinned", false), {}};
      for (const auto& [platform, cudas] : r.at("platforms").items()) {
        for (const auto& cuda : cudas) {
          row.platforms[platform].push_back(std::stoi(cuda.get<std::string>()));
        }
      }
      c.releases.push_back(std::move(row));
    }
  } catch (const std::exception& e) {
    return fail(ErrorCode::usage, std::string("releases.json: ") + e.what());
  }
  std::stable_sort(c.releases.begin(), c.releases.end(), [](const auto& a, const auto& b) {
    return compare_versions(a.version, b.version) < 0;
  });
  return c;
}

const Compat& builtin_compat() {
  static const Compat compat = [] {
    auto c = parse_compat(builtin_compat_text(), builtin_releases_text());
    if (!c) {
      throw std::logic_error("built-in compatibility data: " + c.error().message);
    }
    return std::move(*c);
  }();
  return compat;
}

} // namespace cudnnctl::doctor
