// SPDX-License-Identifier: Apache-2.0
#include "manifest/version.hpp"

#include "manifest/text.hpp"

namespace cudnnctl::manifest {

namespace {

constexpr size_t k_max_parts = 4;
constexpr uint32_t k_max_component = 99999;

std::unexpected<Error> bad_version(std::string_view text, std::string_view why) {
  return fail(ErrorCode::usage, "invalid version " + detail::quote(text) + ": " + std::string(why) +
                                    " (expected 1 to 4 dot-separated numbers, e.g. 9.2.0 or "
                                    "9.2.0.82)");
}

} // namespace

Result<Version> Version::parse(std::string_view text) {
  if (text.empty()) {
    return bad_version(text, "empty");
  }
  Version v;
  size_t start = 0;
  while (true) {
    size_t dot = text.find('.', start);
    std::string_view part =
        text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty()) {
      return bad_version(text, "empty component");
    }
    if (v.parts.size() == k_max_parts) {
      return bad_version(text, "more than 4 components");
    }
    uint32_t value = 0;
    for (char c : part) {
      if (c < '0' || c > '9') {
        return bad_version(text, "components must be decimal digits");
      }
      value = value * 10 + static_cast<uint32_t>(c - '0');
      if (value > k_max_component) {
        return bad_version(text, "component larger than 99999");
      }
    }
    // A leading zero would make two spellings of one version ("9.02" and "9.2"), and labels
    // are looked up as strings (pins, file names).
    if (part.size() > 1 && part[0] == '0') {
      return bad_version(text, "component with a leading zero");
    }
    v.parts.push_back(value);
    if (dot == std::string_view::npos) {
      break;
    }
    start = dot + 1;
  }
  return v;
}

VersionArg VersionArg::of(std::string text) {
  auto v = Version::parse(text);
  return VersionArg{std::move(text), v ? std::optional<Version>(*v) : std::nullopt};
}

std::string Version::str() const {
  return prefix(parts.size());
}

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
