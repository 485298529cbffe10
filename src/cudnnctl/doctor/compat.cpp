// SPDX-License-Identifier: Apache-2.0
// Lookups over the compatibility facts, and reading the site overlay under a root.
#include "doctor/compat.hpp"

#include "util/enum_name.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <stdexcept>

namespace cudnnctl::doctor {

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

VersionKey loose_key(std::string_view v) {
  VersionKey out;
  size_t pos = 0;
  while (pos < v.size()) {
    out.push_back(next_component(v, pos));
  }
  return out;
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

int major_of(std::string_view version) {
  size_t pos = 0;
  return static_cast<int>(next_component(version, pos));
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

const char* check_name(Check c) {
  static constexpr util::EnumName<Check> k_names[] = {
      {Check::minor, "minor"}, {Check::major, "major"}, {Check::optional, "optional"}};
  return util::enum_name(c, k_names, "minor");
}

bool check_accepts(Check check, std::string_view built, std::string_view runtime) {
  switch (check) {
  case Check::optional:
    return true;
  case Check::major:
    return !built.empty() && !runtime.empty() && major_of(built) == major_of(runtime);
  case Check::minor:
    break;
  }
  return version_rule_ok(built, runtime);
}

std::string canonical_framework(std::string_view name) {
  const FrameworkInfo* f = builtin_compat().framework_info(name);
  return f ? f->name : normalize_name(name);
}

const BuildVariant* BuildRow::pypi_variant() const {
  for (const auto& v : variants) {
    if (v.pypi) {
      return &v;
    }
  }
  return nullptr;
}

const BuildVariant* BuildRow::variant_for_cuda(std::string_view cuda) const {
  for (const auto& v : variants) {
    if (compare_versions(v.cuda, cuda) == 0) {
      return &v;
    }
  }
  // A row that names only majors ("12") answers for every minor of that major.
  auto major = util::split(cuda, '.')[0];
  const BuildVariant* found = nullptr;
  for (const auto& v : variants) {
    if (std::to_string(v.cuda_major) == major && v.cuda.find('.') == std::string::npos) {
      found = &v;
    }
  }
  return found;
}

const Archive* ReleaseRow::archive(const std::string& platform, int cuda) const {
  auto p = archives.find(platform);
  if (p == archives.end()) {
    return nullptr;
  }
  auto a = p->second.find(cuda);
  return a == p->second.end() ? nullptr : &a->second;
}

const FrameworkInfo* Compat::framework_info(std::string_view name_or_alias) const {
  std::string n = normalize_name(name_or_alias);
  for (const auto& f : frameworks) {
    if (f.name == n || std::find(f.aliases.begin(), f.aliases.end(), n) != f.aliases.end()) {
      return &f;
    }
  }
  return nullptr;
}

const BuildRow* Compat::build(std::string_view framework, std::string_view version) const {
  const FrameworkInfo* f = framework_info(framework);
  if (!f) {
    return nullptr;
  }
  VersionKey v = loose_key(version);
  for (const auto& row : builds) {
    if (row.framework == f->name && row.effective.contains(v)) {
      return &row;
    }
  }
  return nullptr;
}

Check Compat::check_for(std::string_view framework, std::string_view version) const {
  if (const BuildRow* row = version.empty() ? nullptr : build(framework, version);
      row && row->check) {
    return *row->check;
  }
  const FrameworkInfo* f = framework_info(framework);
  return f ? f->check : Check::minor;
}

std::vector<const BuildRow*> Compat::builds_for(std::string_view framework,
                                                const VersionSet& versions) const {
  std::vector<const BuildRow*> out;
  const FrameworkInfo* f = framework_info(framework);
  if (!f) {
    return out;
  }
  for (const auto& row : builds) {
    if (row.framework == f->name && !row.effective.intersect(versions).empty()) {
      out.push_back(&row);
    }
  }
  return out;
}

VersionSet Compat::known_versions(std::string_view framework) const {
  VersionSet all = VersionSet::none();
  const FrameworkInfo* f = framework_info(framework);
  for (const auto& row : builds) {
    if (f && row.framework == f->name) {
      all = all.unite(row.effective);
    }
  }
  return all;
}

const DriverRow* Compat::driver_minimum(int cuda_major) const {
  for (const auto& d : drivers) {
    if (d.cuda_major == cuda_major) {
      return &d;
    }
  }
  return nullptr;
}

const WorkloadRow* Compat::workload(std::string_view name_or_alias) const {
  std::string n = normalize_name(name_or_alias);
  for (const auto& w : workloads) {
    if (w.name == n || std::find(w.aliases.begin(), w.aliases.end(), n) != w.aliases.end()) {
      return &w;
    }
  }
  return nullptr;
}

const ReleaseRow* Compat::release(std::string_view label) const {
  for (const auto& r : releases) {
    if (r.label == label) {
      return &r;
    }
  }
  return nullptr;
}

Result<Compat> load_compat(const std::filesystem::path& root) {
  Compat c = builtin_compat();
  const std::string dir = "/etc/cudnnctl/compat.d";
  std::filesystem::path host = util::under_root(root, dir);
  for (const auto& name : util::dir_names(host)) {
    if (!name.ends_with(".json") || name.starts_with(".") || util::is_tmp_name(name)) {
      continue; // README, editor backups, half-written files
    }
    std::string shown = dir + "/" + name;
    auto text = util::read_file(host / name, 4u << 20);
    if (!text) {
      return fail(ErrorCode::usage, "compat overlay " + shown + ": " + text.error().message);
    }
    TRY(apply_overlay(c, *text, shown));
  }
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
