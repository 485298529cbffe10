// SPDX-License-Identifier: Apache-2.0
// cuDNN release labels and versions: "9.2.0", "9.2.0.82", "8.9.7.29". Compared numerically
// (minors >= 10 exist: 9.10 > 9.9).
#pragma once

#include "core/result.hpp"

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::manifest {

// --- Interface ---

struct Version {
  std::vector<uint32_t> parts; // 1 to 4 components

  // Parses dot-separated decimal components (1..4, each 0..99999, no sign, no spaces,
  // no empty component, no leading zero such as "9.02"). Error: ErrorCode::usage naming the
  // input (quoted, truncated) and the expected form.
  [[nodiscard]] static Result<Version> parse(std::string_view text);
  [[nodiscard]] std::string str() const;
  [[nodiscard]] uint32_t major() const { return parts.empty() ? 0 : parts[0]; }
  // First `n` components joined ("9.2.0" for n = 3).
  [[nodiscard]] std::string prefix(size_t n) const;
  // True when every component of *this equals the same component of `full`
  // ("9.2" and "9.2.0" are prefixes of "9.2.0.82").
  [[nodiscard]] bool is_prefix_of(const Version& full) const;
  auto operator<=>(const Version&) const = default;
};

// A VERSION argument as the operator typed it: "latest", a partial "9.2", a label "9.2.0", a
// full version "9.2.0.82", or (`use`, `remove`) a store entry's name. Parsed once where the
// command takes it; the layers below take this, not the text.
struct VersionArg {
  std::string text;
  std::optional<Version> version; // when `text` is a version

  [[nodiscard]] static VersionArg of(std::string text);
  [[nodiscard]] bool latest() const { return text == "latest"; }
};

} // namespace cudnnctl::manifest
