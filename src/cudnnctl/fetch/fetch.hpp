// SPDX-License-Identifier: Apache-2.0
// Downloads with libcurl: mirrors in order, retries with backoff, connect and low-speed
// timeouts, resume of partial downloads (Range), a content-addressed cache keyed by sha256.
// Nothing downloaded is trusted before verification.
#pragma once

#include "util/result.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::fetch {

// --- Interface ---

// Call once from main before any other fetch function (curl_global_init).
void global_init();

struct Options {
  std::optional<std::filesystem::path> cacert; // extra CA bundle (host path) for HTTPS
  int attempts_per_mirror = 3;                  // tries per URL for transient failures
  std::chrono::milliseconds backoff_base{500};  // doubled per attempt, capped, jittered
  std::chrono::milliseconds backoff_max{8000};
  std::chrono::seconds connect_timeout{15};
  long low_speed_limit = 1024;                  // bytes/s ...
  std::chrono::seconds low_speed_time{30};      // ... for this long = stalled
  int max_redirects = 5;                        // redirects only to http(s); https -> http refused
  // Progress for the user (done, total or 0 when unknown); may be empty.
  std::function<void(uint64_t done, uint64_t total)> progress;
  // Injected sleep for backoff (tests); default std::this_thread::sleep_for.
  std::function<void(std::chrono::milliseconds)> sleep;
};

// Joins a mirror base URL and a relative path ("http://m/a/" + "cudnn/x" or "http://m/a" +
// "cudnn/x" -> "http://m/a/cudnn/x"). file:// bases work the same way.
std::string join_url(std::string_view base, std::string_view relative);

struct Fetched {
  std::string bytes;
  std::string url; // the URL that answered
};

// Fetches `filename` (e.g. "redistrib_9.2.0.json") from each base in order, at most
// `max_size` bytes. `accept(bytes, url)` may reject a body (e.g. a pin mismatch): that
// mirror counts as failed with the returned error and the next is tried.
// Every base answered 404 (or file:// ENOENT): ErrorCode::usage "not found on any mirror".
// All rejected by accept: the last rejection's error (e.g. ErrorCode::integrity).
// Otherwise: ErrorCode::network listing each mirror's failure.
[[nodiscard]] Result<Fetched> fetch_first(
    const std::vector<std::string>& bases, std::string_view filename, size_t max_size,
    const Options& options,
    const std::function<Status(const std::string& bytes, const std::string& url)>& accept);

// Receives the archive's bytes in order as they become known, for streaming consumers
// (hash + extraction in one pass). Bytes of a partial file resumed from a previous run are
// replayed first, from offset 0. restart() is called whenever the stream starts again from
// byte 0 (server ignored Range, retry from zero, next mirror): discard what was consumed.
struct StreamSink {
  std::function<Status(const char* data, size_t size)> data;
  std::function<Status()> restart;
};

struct ArchiveRequest {
  std::vector<std::string> urls; // candidate URLs, tried in order
  std::string sha256;            // expected, from the manifest
  uint64_t size = 0;             // expected, from the manifest
};

// Makes the verified archive available at <cache_dir>/<sha256>.tar.xz and returns that path.
// A cached file is re-hashed before use (a file renamed without fsync can read as zeros
// after power loss); a bad cached file is removed and downloaded again.
// Downloads into <cache_dir>/<sha256>.partial, resuming it with Range when it exists (a
// server that ignores Range restarts from 0; Content-Range start is checked), verifies size
// then sha256 (resumed file mismatch: one retry from zero), fsyncs, renames into place.
// A mismatch after that: the partial is removed, the next URL tried; all mismatched:
// ErrorCode::integrity with both values. Network failures on all URLs: ErrorCode::network.
// Nothing but <sha256>.partial/<sha256>.tar.xz is ever written in cache_dir.
[[nodiscard]] Result<std::filesystem::path> fetch_archive(const ArchiveRequest& request,
                                                          const std::filesystem::path& cache_dir,
                                                          const Options& options,
                                                          StreamSink* sink = nullptr);

} // namespace cudnnctl::fetch
