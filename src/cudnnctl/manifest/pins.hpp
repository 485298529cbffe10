// SPDX-License-Identifier: Apache-2.0
// Manifest pins: the sha256 of the exact manifest bytes, per label. Built-in pins come from
// manifests/pins.sha256 (compiled in); sites add <root>/etc/cudnnctl/pins.d/*.sha256.
#pragma once

#include "util/result.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::manifest {

// --- Interface ---

enum class PinVerdict { match, mismatch, unpinned };

struct Pin {
  std::string sha256;
  std::string source; // "built-in" or the pins.d file and line
};

class PinSet {
public:
  // Adds `sha256sum`-format lines ("<64 hex>  redistrib_<label>.json"; '#' comments and blank
  // lines allowed). Malformed line: ErrorCode::usage naming source:line. A site pin that
  // contradicts another pin for the same label: ErrorCode::usage.
  [[nodiscard]] Status add(std::string_view text, std::string_view source);
  [[nodiscard]] PinVerdict check(std::string_view label, std::string_view sha256) const;
  [[nodiscard]] const Pin* find(std::string_view label) const;
  [[nodiscard]] std::vector<std::string> labels() const; // sorted by Version
  [[nodiscard]] bool empty() const { return m_pins.empty(); }

private:
  std::map<std::string, Pin, std::less<>> m_pins;
};

// The pins compiled into the binary (manifests/pins.sha256).
std::string_view builtin_pins_text();

// Built-in pins plus every *.sha256 file in `pins_dir` (missing dir: just the built-ins).
[[nodiscard]] Result<PinSet> load_pins(const std::filesystem::path& pins_dir);

} // namespace cudnnctl::manifest
