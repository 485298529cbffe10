// SPDX-License-Identifier: Apache-2.0
// (provisional implementation; replaced by the manifest module's)
#include "manifest/version.hpp"

#include "util/strings.hpp"

namespace cudnnctl::manifest {

Result<Version> Version::parse(std::string_view text) {
  Version v;
  auto parts = util::split(text, '.');
  if (text.empty() || parts.size() > 4) {
    return fail(ErrorCode::usage, "invalid version \"" + std::string(text) + "\"");
  }
  for (const auto& p : parts) {
    auto n = util::parse_u64(p);
    if (!n || *n > 99999) {
      return fail(ErrorCode::usage, "invalid version \"" + std::string(text) + "\"");
    }
    v.parts.push_back(static_cast<uint32_t>(*n));
  }
  return v;
}

std::string Version::str() const { return prefix(parts.size()); }

std::string Version::prefix(size_t n) const {
  std::string out;
  for (size_t i = 0; i < n && i < parts.size(); ++i) {
    if (i) {
      out += '.';
    }
    out += std::to_string(parts[i]);
  }
  return out;
}

bool Version::is_prefix_of(const Version& full) const {
  if (parts.size() > full.parts.size()) {
    return false;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] != full.parts[i]) {
      return false;
    }
  }
  return true;
}

} // namespace cudnnctl::manifest
