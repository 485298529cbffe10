// SPDX-License-Identifier: Apache-2.0
// Downloads with libcurl: mirrors in order, retries with backoff, connect and low-speed
// timeouts, resume of partial downloads (Range), a content-addressed cache keyed by sha256.
// Nothing downloaded is trusted before verification.
#pragma once

#include "core/result.hpp"

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

// The libcurl in use ("7.88.1"; loads it in the developer build, fetch/curl_lib.hpp).
std::string libcurl_version();

struct Options {
  // CA bundle (host path) for HTTPS. It *replaces* the system trust store (CURLOPT_CAINFO
  // with CURLOPT_CAPATH cleared): with --cacert, only the given file is trusted. Bundle the
  // public roots into it when the mirror set mixes a private CA with public ones.
  std::optional<std::filesystem::path> cacert;
  int attempts_per_mirror = 3;                 // tries per URL for transient failures
  std::chrono::milliseconds backoff_base{500}; // doubled per attempt, capped, jittered
  std::chrono::milliseconds backoff_max{8000};
  std::chrono::seconds connect_timeout{15};
  long low_speed_limit = 1024;             // bytes/s ...
  std::chrono::seconds low_speed_time{30}; // ... for this long = stalled
  int max_redirects = 5;                   // redirects only to http(s); https -> http refused
  // The most one URL may take, every attempt and backoff included (0 = no limit). For small
  // files (manifests): a mirror that trickles bytes just above low_speed_limit would
  // otherwise hold the command for as long as max_size takes at that rate. fetch_first
  // replaces 0 with small_document_deadline().
  std::chrono::seconds url_deadline{0};
  // CURLOPT_TIMEOUT_MS of one attempt (0 = none); set per attempt from url_deadline.
  std::chrono::milliseconds attempt_timeout{0};
  // Progress for the user (done, total or 0 when unknown); may be empty.
  std::function<void(uint64_t done, uint64_t total)> progress;
  // Injected sleep for backoff (tests); default std::this_thread::sleep_for.
  std::function<void(std::chrono::milliseconds)> sleep;
  // Injected random source for the backoff jitter: uniform in [0, 1) (tests); default a
  // std::mt19937_64 seeded from std::random_device.
  std::function<double()> random;
};
// What every download of this process says while it runs (the CLI prints `trace` under -v
// and turns `warn` into a warning; both empty by default): `trace` a line per try ("GET URL
// (try 1 of 3)", the failure and the wait before the next try), `warn` a mirror that failed
// and was skipped for the next one.
struct Reporter {
  std::function<void(const std::string&)> trace;
  std::function<void(const std::string&)> warn;
};
void set_reporter(Reporter reporter);
const Reporter& reporter();

// Proxies: libcurl reads http_proxy (lower case only; HTTP_PROXY is ignored on purpose),
// https_proxy/HTTPS_PROXY and no_proxy from the environment. systemd units do not inherit
// a login shell's environment.
//
// Per URL: a transient failure (connect refused/timeout, DNS, low-speed stall, dropped
// connection, HTTP 408/429/500/502/503/504) is retried up to attempts_per_mirror times with
// backoff (Retry-After honoured, capped at backoff_max). HTTP 404/410 and file:// ENOENT are
// "not found" on that mirror, other HTTP errors and TLS failures fail it at once.

// Joins a mirror base URL and a relative path ("http://m/a/" + "cudnn/x" or "http://m/a" +
// "cudnn/x" -> "http://m/a/cudnn/x"). file:// bases work the same way. Leading slashes of
// `relative` are dropped; characters that cannot stand in a URL path (space, controls,
// non-ASCII, '?', '#', ...) are percent-encoded, an existing '%' is kept.
std::string join_url(std::string_view base, std::string_view relative);

struct Fetched {
  std::string bytes;
  std::string url; // the URL that answered
};

// The total deadline per URL of a small document when Options::url_deadline is 0: 120 s, or
// the test knob CUDNNCTL_TEST_MANIFEST_DEADLINE=<seconds> (1 to 3600).
std::chrono::seconds small_document_deadline();

// Fetches `filename` (e.g. "redistrib_9.2.0.json") from each base in order, at most
// `max_size` bytes. `accept(bytes, url)` may reject a body (e.g. a pin mismatch): that
// mirror counts as failed with the returned error and the next is tried.
// A body larger than max_size fails that mirror. A retry resumes (Range) what an earlier
// attempt on the same URL received.
// Every base answered 404 (or file:// ENOENT): ErrorCode::usage "not found on any mirror".
// At least one body rejected by accept: the last rejection's error code (e.g.
// ErrorCode::integrity: a tampered manifest outranks an unreachable mirror), its message
// followed by every mirror's failure. Otherwise: ErrorCode::network listing each mirror's
// failure. An ErrorCode::environment/internal error from accept is returned at once.
[[nodiscard]] Result<Fetched>
fetch_first(const std::vector<std::string>& bases, std::string_view filename, size_t max_size,
            const Options& options,
            const std::function<Status(const std::string& bytes, const std::string& url)>& accept);

// Receives the archive's bytes in order as they become known, for streaming consumers
// (hash + extraction in one pass). Bytes of a partial file resumed from a previous run (or
// of a cached file) are replayed first, from offset 0. restart() is called whenever the
// stream starts again from byte 0 after data was delivered (server ignored Range, retry
// from zero, next mirror, bad cached file): discard what was consumed. Nothing delivered
// is verified until fetch_archive returns success.
// An error from data(): ErrorCode::environment/internal (disk full...) ends fetch_archive
// at once with it (the partial stays for a resume). Any other code (e.g. the extractor
// refusing an entry) may be caused by corrupt bytes, so it is not trusted yet: the download
// goes on without the sink, and is verified. Verified: the archive is cached and that
// error is returned. Mismatch: the error is dropped, restart() is called and the next
// attempt streams again. An error from restart() ends fetch_archive at once.
struct StreamSink {
  std::function<Status(const char* data, size_t size)> data;
  std::function<Status()> restart;
};

struct ArchiveRequest {
  std::vector<std::string> urls; // candidate URLs, tried in order
  std::string sha256;            // expected, from the manifest
  uint64_t size = 0;             // expected, from the manifest
  // The cache file's suffix: NVIDIA's archives are <sha256>.tar.xz, a mirror's repacks
  // <sha256>.tar.zst (keyed by the repack's own sha256).
  std::string cache_suffix = ".tar.xz";
  // When not empty: the digest of every util::k_sha256_chunk bytes (a repack's sidecar lists
  // them), checked instead of `sha256` (which still names the cache file): the bytes are then
  // hashed on several threads (util::Sha256Worker::Chunked). Either pins every byte.
  std::vector<std::string> chunk_sha256;
  // Whether the file is fsynced (and its writeback started as it grows) before it is renamed
  // into place. An install's cache entry need not be: it is re-verified before every use (a
  // file renamed without fsync can read as zeros after a power loss), and skipping it leaves
  // the disk's write bandwidth during the one pass to the files being installed, which are
  // fsynced before the switch (docs/BENCHMARKS.md). The mirror's files, served to the fleet,
  // are.
  bool durable = true;
};

// <cache_dir>/<sha256 in lower case><suffix>: where fetch_archive keeps the verified archive
// (readers of the cache ask here rather than spell the name again).
[[nodiscard]] std::filesystem::path cached_archive(const std::filesystem::path& cache_dir,
                                                   std::string_view sha256,
                                                   std::string_view suffix = ".tar.xz");

// Makes the verified archive available at <cache_dir>/<sha256><cache_suffix> (.tar.xz unless
// the request says otherwise) and returns that path.
// A cached file is re-hashed before use (a file renamed without fsync can read as zeros
// after power loss); a bad cached file is removed and downloaded again.
// Downloads into <cache_dir>/<sha256>.partial, resuming it with Range when it exists (a
// server that ignores Range restarts from 0; Content-Range start is checked), verifies size
// then sha256 (resumed file mismatch: one retry from zero), fsyncs, renames into place.
// A mismatch after that: the partial is removed, the next URL tried; all mismatched:
// ErrorCode::integrity with both values. Network failures on all URLs: ErrorCode::network.
// Some mismatched, others failed on the network: ErrorCode::integrity, every URL's failure
// listed. More bytes than request.size stop the transfer at once (a lying Content-Length
// cannot fill the disk) and count as a mismatch. A partial that failed only on the network
// stays as <sha256>.partial for the next run to resume; one that failed verification is
// removed. cache_dir is created when missing; a bad request (sha256 not 64 hex digits, no
// URL) is ErrorCode::usage; disk errors are ErrorCode::environment.
// Nothing but <sha256>.partial/<sha256><cache_suffix> is ever written in cache_dir (the
// sha256 in lower case).
[[nodiscard]] Result<std::filesystem::path> fetch_archive(const ArchiveRequest& request,
                                                          const std::filesystem::path& cache_dir,
                                                          const Options& options,
                                                          StreamSink* sink = nullptr);

} // namespace cudnnctl::fetch
