// SPDX-License-Identifier: Apache-2.0
// The TOML subset cudnnctl's config uses: `key = value` lines at top level, '#' comments,
// values that are basic strings ("..."), integers, booleans, or single-line arrays of
// strings. Tables, dotted keys and multi-line values are refused with a clear error.
#pragma once

#include "core/result.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cudnnctl::util {

// --- Interface ---

using TomlValue = std::variant<std::string, int64_t, bool, std::vector<std::string>>;

struct TomlEntry {
  TomlValue value;
  int line = 0;
};

// Parses `text`; errors are ErrorCode::usage "<source>:<line>: <what>".
[[nodiscard]] Result<std::map<std::string, TomlEntry>> parse_toml(std::string_view text,
                                                                  std::string_view source);

} // namespace cudnnctl::util
