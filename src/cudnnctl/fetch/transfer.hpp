// SPDX-License-Identifier: Apache-2.0
// One URL, tried up to attempts_per_mirror times: the transfer attempt with its header and
// body callbacks, and the retry loop around it. Shared by fetch_first and fetch_archive.
#pragma once

#include "core/result.hpp"
#include "fetch/classify.hpp"
#include "fetch/fetch.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace cudnnctl::fetch {

class CurlHandle;

// --- Interface ---

// Where the body of a URL goes. All three are required.
struct BodyTarget {
  // The byte offset the next attempt resumes from (0 = from the start).
  std::function<uint64_t()> offset;
  // Discard everything received so far (the next attempt starts at byte 0). An error here
  // (e.g. ftruncate failed) ends the whole download.
  std::function<Status()> restart;
  // Body bytes in order; `announced_total` is offset + Content-Length when the server sent
  // one, else 0. Return false to stop the transfer (the target keeps its own error).
  std::function<bool(std::string_view data, uint64_t announced_total)> write;
  // At most this many bytes in total (offset included); more stops the transfer with
  // Next::too_large. nullopt: unlimited.
  std::optional<uint64_t> limit;
  // The size the whole body must have, when known (archives): a body that ends early
  // without a Content-Length is then treated as a dropped connection and resumed.
  std::optional<uint64_t> expected_total;
};

// One GET of `url` from target.offset(), body into `target`. Never fails itself: everything
// that happened is in the report (judge_attempt decides what it means). An Error only when
// libcurl rejects an option.
[[nodiscard]] Result<AttemptReport> run_attempt(CurlHandle& curl, const std::string& url,
                                                const Options& options, BodyTarget& target);

// Tries `url` until it answers or the attempts are used up: transient failures back off
// (backoff_delay with options.random, honouring Retry-After) and resume; a refused resume
// restarts from byte 0 (the first restart per call is free, later ones count as attempts).
// Returns the last verdict: done, not_found, fail, too_large or consumer (retry and restart
// never come back; when the attempts run out they become fail with the last reason).
// An Error only from target.restart or a rejected libcurl option.
// Tells the reporter (fetch.hpp) that `url` failed for `reason` and `next` is tried instead.
void report_skipped(const std::string& url, const std::string& reason, const std::string& next);

[[nodiscard]] Result<Verdict> try_url(CurlHandle& curl, const std::string& url,
                                      const Options& options, BodyTarget& target);

} // namespace cudnnctl::fetch
