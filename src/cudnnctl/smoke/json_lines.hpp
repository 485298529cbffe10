// SPDX-License-Identifier: Apache-2.0
// Reading the GPU children's output: one JSON object per line, fields read leniently (a
// missing or mistyped field is absent, never an exception). Shared by smoke/runner.cpp and
// bench/parse.cpp.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::smoke {

// --- Interface ---

// The lines of `out` that are JSON objects, in order; others are skipped.
std::vector<nlohmann::json> json_lines(const std::string& out);

// j[key] as a string ("" when absent or not a string).
std::string str_of(const nlohmann::json& j, const char* key);
// j[key] as an integer / any number (nullopt when absent or not one).
std::optional<long> long_of(const nlohmann::json& j, const char* key);
std::optional<double> number_of(const nlohmann::json& j, const char* key);

// The last non-empty line of `text`, at most 300 bytes: what a child that died says last.
std::string last_line(const std::string& text);

} // namespace cudnnctl::smoke
