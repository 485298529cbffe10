// SPDX-License-Identifier: Apache-2.0
// Retry delays as pure functions: the clock and the random source are parameters, so the
// policy is tested with tables (nix src/libstore-tests/filetransfer-retry.cc).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace cudnnctl::fetch {

// --- Interface ---

// The delay before retry number `retry` (1 = the retry after the first failure).
// Without Retry-After: d = min(base * 2^(retry-1), max), then "equal jitter": a delay in
// [d/2, d] chosen by `unit` (a uniform random value in [0, 1); values outside are clamped),
// so that many clients failing together do not retry in lock-step.
// With Retry-After (the server said how long to wait): exactly that, capped at `max`, no
// jitter. A non-positive base or max gives 0; `retry` < 1 is treated as 1.
[[nodiscard]] std::chrono::milliseconds
backoff_delay(int retry, std::chrono::milliseconds base, std::chrono::milliseconds max,
              std::optional<std::chrono::seconds> retry_after, double unit);

// Parses a Retry-After header value (RFC 9110 10.2.3): delta-seconds ("120") or an
// IMF-fixdate ("Wed, 21 Oct 2015 07:28:00 GMT") taken relative to `now`; a date in the past
// gives 0. Anything else (negative numbers, garbage, obsolete date formats): nullopt.
[[nodiscard]] std::optional<std::chrono::seconds>
parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now);

} // namespace cudnnctl::fetch
