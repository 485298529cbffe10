// SPDX-License-Identifier: Apache-2.0
// fetch_archive: the content-addressed cache, resume of <sha256>.partial, verification.
#include "fetch/archive_stream.hpp"
#include "fetch/classify.hpp"
#include "fetch/curl_handle.hpp"
#include "fetch/curl_lib.hpp"
#include "fetch/fetch.hpp"
#include "fetch/transfer.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <cerrno>
#include <cstdio>
#include <sys/stat.h>

namespace cudnnctl::fetch {

namespace fs = std::filesystem;

namespace {

std::string lower_hex(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'F') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

// The last path component of a URL, for messages ("cudnn-...-archive.tar.xz").
std::string url_basename(const std::string& url) {
  auto end = url.find_first_of("?#");
  std::string_view path = std::string_view(url).substr(0, end);
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// Checks an existing <sha256>.tar.xz: size first (no read when it differs), then the digest
// while replaying it through the stream. True when it is good.
Result<bool> cached_file_good(const fs::path& path, const ArchiveRequest& request,
                              ArchiveStream& stream) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return fail_errno("cannot stat " + path.string(), errno);
  }
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != request.size) {
    return false;
  }
  TRY(replay_file(path, request.size, stream));
  return static_cast<bool>(stream.check(path.string(), request));
}

// The cache entry is verified: the sink's deferred error (if any) is now the real answer.
Result<fs::path> verified(const fs::path& path, const ArchiveStream& stream) {
  if (stream.deferred()) {
    return fail(*stream.deferred());
  }
  return path;
}

// Makes the verified partial the cache entry.
Status publish(PartialFile& partial, const fs::path& final_path) {
  TRY(partial.sync_and_close());
  if (!partial.durable()) {
    // Re-verified before every use: a rename that does not survive a power loss, or a file
    // that reads as zeros after one, costs a download, nothing else.
    if (::rename(partial.path().c_str(), final_path.c_str()) != 0) {
      return fail_errno("cannot rename " + partial.path().string() + " to " + final_path.string(),
                        errno);
    }
    return {};
  }
  // rename + fsync of the directory: the entry appears whole or not at all.
  return util::rename_durable(partial.path(), final_path);
}

} // namespace

fs::path cached_archive(const fs::path& cache_dir, std::string_view sha256,
                        std::string_view suffix) {
  return cache_dir / (lower_hex(sha256) + std::string(suffix));
}

Result<fs::path> fetch_archive(const ArchiveRequest& request, const fs::path& cache_dir,
                               const Options& options, StreamSink* sink) {
  if (!util::is_sha256_hex(request.sha256)) {
    return fail(ErrorCode::usage, "not a sha256 digest: '" + request.sha256 + "'");
  }
  if (request.urls.empty()) {
    return fail(ErrorCode::usage, "no URL to download the archive " + request.sha256 + " from");
  }
  const std::string sha256 = lower_hex(request.sha256);
  TRY(util::make_dirs(cache_dir));
  const fs::path final_path = cached_archive(cache_dir, sha256, request.cache_suffix);
  const fs::path partial_path = cache_dir / (sha256 + ".partial");
  ArchiveStream stream(sink, options, request.size, !request.chunk_sha256.empty());

  // 1. A cached entry is re-hashed before use: renamed without fsync before a power loss,
  // it can read as zeros.
  if (util::exists_nofollow(final_path)) {
    TRY_ASSIGN(bool good, cached_file_good(final_path, request, stream));
    if (good) {
      TRY(util::remove_file(partial_path)); // a leftover of an older run, useless now
      return verified(final_path, stream);
    }
    TRY(util::remove_file(final_path)); // no poisoned cache entry
    TRY(stream.restart());
  }

  // 2. A partial from an earlier run: re-hash (and replay) its bytes, then resume after them.
  TRY_ASSIGN(PartialFile partial, PartialFile::open(partial_path, request.durable));
  bool resumed = false; // the partial's bytes came from more than one transfer
  if (partial.size() > request.size) {
    TRY(partial.truncate()); // cannot be a prefix of the archive
  } else if (partial.size() > 0) {
    TRY(replay_file(partial_path, partial.size(), stream));
    resumed = true;
    if (partial.size() == request.size) {
      // Complete already (interrupted between the last byte and the rename).
      if (stream.check(partial_path.string(), request)) {
        TRY(publish(partial, final_path));
        return verified(final_path, stream);
      }
      TRY(partial.truncate());
      TRY(stream.restart());
      resumed = false;
    }
  }

  // 3. The URLs in order. The partial is shared: every URL serves the same bytes (the
  // digest says which), so a download broken on one mirror resumes on the next.
  std::optional<Error> fatal; // a disk or sink error: the whole download stops
  BodyTarget target;
  target.offset = [&] {
    if (stream.size() > 0) {
      resumed = true;
    }
    return stream.size();
  };
  target.restart = [&]() -> Status {
    TRY(partial.truncate());
    resumed = false;
    return stream.restart();
  };
  target.write = [&](std::string_view data, uint64_t) {
    Status status = partial.append(data);
    if (status) {
      status = stream.feed(data);
    }
    if (!status) {
      fatal = std::move(status).error();
      return false;
    }
    return true;
  };
  target.limit = request.size; // more than that is wrong: stop before it reaches the disk
  target.expected_total = request.size;

  TRY(curl_ready());
  CurlHandle curl;
  std::vector<std::pair<std::string, std::string>> failures;
  bool mismatch = false;
  for (size_t i = 0; i < request.urls.size(); ++i) {
    const std::string& url = request.urls[i];
    bool retried_from_zero = false;
    for (;;) {
      TRY_ASSIGN(Verdict verdict, try_url(curl, url, options, target));
      if (verdict.next == Next::consumer) {
        if (fatal) {
          return fail(std::move(*fatal));
        }
        return fail(ErrorCode::internal, "download of " + url + " stopped by a callback");
      }
      std::string problem;
      if (verdict.next == Next::done) {
        Status check = stream.check(url_basename(url), request);
        if (check) {
          TRY(publish(partial, final_path));
          return verified(final_path, stream);
        }
        problem = check.error().message;
      } else if (verdict.next == Next::too_large) {
        problem = "size mismatch for " + url_basename(url) + ": manifest says " +
                  std::to_string(request.size) + " bytes, the server sent more (transfer stopped)";
      } else {
        // Network or HTTP failure: the partial stays, the next URL resumes it.
        failures.emplace_back(url, verdict.reason);
        if (i + 1 < request.urls.size()) {
          report_skipped(url, verdict.reason, request.urls[i + 1]);
        }
        break;
      }
      // Verification failed: the partial is never kept (no poisoned resume either).
      const bool was_resumed = resumed;
      TRY(target.restart());
      if (was_resumed && !retried_from_zero) {
        retried_from_zero = true; // a resumed file may have a stale prefix: once from zero
        continue;
      }
      failures.emplace_back(url, problem);
      mismatch = true;
      break;
    }
  }

  // Only a partial worth resuming stays; an empty one is removed.
  TRY(partial.close_or_remove_if_empty());
  if (mismatch) {
    return fail(
        ErrorCode::integrity,
        summarize_failures("the archive " + sha256 + " failed verification (nothing was cached)",
                           failures));
  }
  return fail(ErrorCode::network,
              summarize_failures("download failed on every mirror", failures) +
                  std::string(k_network_hint) +
                  (partial.size() > 0 ? "; " + std::to_string(partial.size()) + " bytes kept in " +
                                            partial_path.string() + " for a resume"
                                      : std::string()));
}

} // namespace cudnnctl::fetch
