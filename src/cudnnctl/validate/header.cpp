// SPDX-License-Identifier: Apache-2.0
#include "validate/header.hpp"

#include "util/fs.hpp"
#include "util/strings.hpp"

namespace cudnnctl::validate {

static std::optional<int> find_define(std::string_view text, std::string_view name) {
  for (const auto& raw : util::split(text, '\n')) {
    auto line = util::trim(raw);
    if (!line.starts_with("#")) {
      continue;
    }
    line.remove_prefix(1);
    line = util::trim(line);
    if (!line.starts_with("define")) {
      continue;
    }
    line.remove_prefix(6);
    if (line.empty() || (line[0] != ' ' && line[0] != '\t')) {
      continue;
    }
    line = util::trim(line);
    if (!line.starts_with(name)) {
      continue;
    }
    auto rest = line.substr(name.size());
    if (rest.empty() || (rest[0] != ' ' && rest[0] != '\t')) {
      continue;
    }
    rest = util::trim(rest);
    auto end = rest.find_first_not_of("0123456789");
    auto digits = rest.substr(0, end);
    if (auto v = util::parse_u64(digits); v && *v < 100000) {
      return static_cast<int>(*v);
    }
  }
  return std::nullopt;
}

Result<HeaderVersion> parse_version_header(std::string_view text) {
  HeaderVersion v;
  const std::pair<const char*, int*> fields[] = {
      {"CUDNN_MAJOR", &v.major}, {"CUDNN_MINOR", &v.minor}, {"CUDNN_PATCHLEVEL", &v.patch}};
  for (const auto& [name, out] : fields) {
    auto value = find_define(text, name);
    if (!value) {
      return fail(ErrorCode::integrity,
                  std::string("cudnn_version.h has no numeric #define ") + name);
    }
    *out = *value;
  }
  return v;
}

Result<HeaderVersion> read_version_header(const std::filesystem::path& path) {
  auto text = util::read_file(path, 1 << 20);
  if (!text) {
    return fail(ErrorCode::integrity, "cannot read " + path.string() + ": " + text.error().message);
  }
  auto v = parse_version_header(*text);
  if (!v) {
    return fail(ErrorCode::integrity, path.string() + ": " + v.error().message);
  }
  return v;
}

} // namespace cudnnctl::validate
