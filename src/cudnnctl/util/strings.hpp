// SPDX-License-Identifier: Apache-2.0
// Small string helpers (GCC 12 has no std::format).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::util {

// --- Interface ---

std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
// Strict unsigned decimal parse (digits only, no sign, no overflow).
std::optional<uint64_t> parse_u64(std::string_view s);
// `v` with `decimals` decimals ("14895.8"); ShowSign::yes: always with its sign ("+5.2").
enum class ShowSign { no, yes };
std::string fixed(double v, int decimals, ShowSign sign = ShowSign::no);
// Length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, at
// most U+10FFFF) at the start of `s`, or 0 when it does not start with one (or is empty).
size_t utf8_sequence_length(std::string_view s);
// True when all of `s` is well-formed UTF-8 (what JSON text needs).
bool is_valid_utf8(std::string_view s);
// "1.5 GiB", "320 KiB", "12 B".
std::string human_bytes(uint64_t bytes);
// Current UTC time as "2026-11-30T03:50:47Z".
std::string utc_timestamp();
// The same, usable in file names: "20261130T035047Z".
std::string compact_utc_timestamp();

} // namespace cudnnctl::util
