// SPDX-License-Identifier: Apache-2.0
// Internal helpers of the manifest module for putting untrusted text into one-line messages.
#pragma once

#include <string>
#include <string_view>

namespace cudnnctl::manifest::detail {

// --- Interface ---

// `s` in double quotes, control and non-ASCII bytes as \xNN, cut after `max` bytes with
// "..." and the full length: safe to embed in a one-line message whatever `s` holds.
std::string quote(std::string_view s, size_t max = 160);

// "an array", "a string": the article and the noun, for messages about JSON types.
std::string a_or_an(std::string_view noun);

// `s` itself when it is short printable ASCII without spaces or quotes (a platform key, a
// label); otherwise quote(s).
std::string printable(std::string_view s);

// True for 1 to `max_size` characters of [A-Za-z0-9._+~-] that are not "." or "..": safe as
// one path component and in a URL.
bool is_plain_name(std::string_view s, size_t max_size = 64);

} // namespace cudnnctl::manifest::detail
