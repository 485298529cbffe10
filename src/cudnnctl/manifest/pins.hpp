// SPDX-License-Identifier: Apache-2.0
// Manifest pins: the sha256 of the exact manifest bytes, per label. Built-in pins come from
// manifests/pins.sha256 (compiled in); sites add <root>/etc/cudnnctl/pins.d/*.sha256. Site
// pins files may also pin repack sidecars (`mirror --repack`): the sha256 of the exact bytes
// of cudnnctl-repack/<original archive sha256>.json, per original archive.
#pragma once

#include "core/result.hpp"
#include "manifest/version.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::manifest {

// --- Interface ---

enum class PinVerdict { match, mismatch, unpinned };

// Pin::source of the pins compiled into the binary.
inline constexpr std::string_view k_builtin_pin_source = "built-in";

struct Pin {
  std::string sha256; // 64 lower-case hex digits
  std::string source; // "built-in" or the pins.d file and line ("<file>:<line>")
  Version label;      // the label pinned, parsed (empty for a repack sidecar's pin)
};

// The directory of repack sidecars in a mirror, and a sidecar's name in it.
inline constexpr std::string_view k_repack_dir = "cudnnctl-repack";
[[nodiscard]] std::string
repack_sidecar_name(std::string_view original_sha256); // "<dir>/<sha>.json"

class PinSet {
public:
  // Adds `sha256sum`-format lines ("<64 hex>  redistrib_<label>.json", also " *" binary
  // mode; '#' comments and blank lines allowed; the label is a 3- or 4-component version),
  // and sidecar pins "<64 hex>  cudnnctl-repack/<64 hex of the original archive>.json".
  // Malformed line: ErrorCode::usage naming source:line. A pin that contradicts another pin
  // for the same label: ErrorCode::usage naming both sources. All or nothing: on error no
  // line of `text` is added. Pass k_builtin_pin_source as `source` for the built-in pins.
  [[nodiscard]] Status add(std::string_view text, std::string_view source);
  // match / mismatch against the pin for `label` (hex compared case-insensitively), or
  // unpinned when no pin names that label (labels are compared as strings: "9.2.0").
  [[nodiscard]] PinVerdict check(std::string_view label, std::string_view sha256) const;
  // The pin for `label`, or nullptr.
  [[nodiscard]] const Pin* find(std::string_view label) const;
  [[nodiscard]] std::vector<std::string> labels() const; // sorted by Version
  [[nodiscard]] bool empty() const { return m_pins.empty() && m_repacks.empty(); }
  // The pin of the repack sidecar of the archive whose sha256 is `original_sha256`, or nullptr.
  [[nodiscard]] const Pin* find_repack(std::string_view original_sha256) const;
  // The original archives' sha256 that have a sidecar pin, sorted.
  [[nodiscard]] std::vector<std::string> repack_originals() const;

private:
  std::map<std::string, Pin, std::less<>> m_pins;
  std::map<std::string, Pin, std::less<>> m_repacks; // original sha256 -> sidecar pin
};

// The pins compiled into the binary (manifests/pins.sha256, byte for byte).
std::string_view builtin_pins_text();

// Built-in pins plus every *.sha256 file in `pins_dir` (a host path, e.g.
// <root>/etc/cudnnctl/pins.d), in sorted file-name order; names starting with '.' and
// temporaries (util::is_tmp_name) are skipped. Missing dir: just the built-ins. A dir that
// cannot be listed or a file that cannot be read: ErrorCode::environment. Bad lines or
// contradicting pins: ErrorCode::usage (see PinSet::add). Reads only; writes nothing.
[[nodiscard]] Result<PinSet> load_pins(const std::filesystem::path& pins_dir);

} // namespace cudnnctl::manifest
