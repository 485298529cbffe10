// SPDX-License-Identifier: Apache-2.0
// fetch_first (small files into memory); fetch_archive is in archive_fetch.cpp.
#include "fetch/fetch.hpp"

#include "fetch/classify.hpp"
#include "fetch/curl_handle.hpp"
#include "fetch/curl_lib.hpp"
#include "fetch/transfer.hpp"

#include <cstdlib>

namespace cudnnctl::fetch {

std::string libcurl_version() {
  if (!curl_ready()) {
    return "not found"; // --version still answers; a download says why (curl_ready)
  }
  const curl_version_info_data* info = curl_lib().version_info(CURLVERSION_NOW);
  return info && info->version ? info->version : "unknown";
}

std::chrono::seconds small_document_deadline() {
  if (const char* t = std::getenv("CUDNNCTL_TEST_MANIFEST_DEADLINE"); t && *t) {
    char* end = nullptr;
    long n = std::strtol(t, &end, 10);
    if (end && *end == '\0' && n >= 1 && n <= 3600) {
      return std::chrono::seconds(n);
    }
  }
  return std::chrono::seconds(120);
}

namespace {
Reporter& the_reporter() {
  static Reporter r;
  return r;
}
} // namespace

void set_reporter(Reporter reporter) {
  the_reporter() = std::move(reporter);
}

const Reporter& reporter() {
  return the_reporter();
}

void report_skipped(const std::string& url, const std::string& reason, const std::string& next) {
  if (reporter().warn) {
    reporter().warn("mirror " + url + " failed (" + reason + "); falling back to " + next);
  }
}

Result<Fetched>
fetch_first(const std::vector<std::string>& bases, std::string_view filename, size_t max_size,
            const Options& given,
            const std::function<Status(const std::string& bytes, const std::string& url)>& accept) {
  // Every small document (manifest, listing, sidecar, recall list) gets a total deadline per
  // URL: a mirror trickling bytes just above the low-speed limit would otherwise hold the
  // command for as long as max_size takes at that rate (issue 34, F17; issue 14, B18).
  Options options = given;
  if (options.url_deadline.count() == 0) {
    options.url_deadline = small_document_deadline();
  }
  if (bases.empty()) {
    return fail(ErrorCode::usage, "no mirror to download " + std::string(filename) + " from");
  }
  TRY(curl_ready());
  CurlHandle curl;
  std::vector<std::pair<std::string, std::string>> failures;
  size_t not_found = 0;
  std::optional<Error> rejection;

  for (size_t i = 0; i < bases.size(); ++i) {
    const std::string& base = bases[i];
    const std::string url = join_url(base, filename);
    std::string body;
    BodyTarget target;
    // A retry on the same URL resumes with Range where the body stopped.
    target.offset = [&body] { return static_cast<uint64_t>(body.size()); };
    target.restart = [&body]() -> Status {
      body.clear();
      return {};
    };
    target.write = [&body, &options](std::string_view data, uint64_t announced) {
      body.append(data);
      if (options.progress) {
        options.progress(body.size(), announced);
      }
      return true;
    };
    target.limit = max_size;

    TRY_ASSIGN(Verdict verdict, try_url(curl, url, options, target));
    switch (verdict.next) {
    case Next::done: {
      Status accepted = accept ? accept(body, url) : Status{};
      if (accepted) {
        return Fetched{std::move(body), url};
      }
      Error error = std::move(accepted).error();
      if (error.code == ErrorCode::environment || error.code == ErrorCode::internal) {
        return fail(std::move(error));
      }
      failures.emplace_back(url, error.full_message());
      rejection = std::move(error);
      break;
    }
    case Next::not_found:
      ++not_found;
      failures.emplace_back(url, verdict.reason);
      break;
    case Next::too_large:
      failures.emplace_back(url, "response larger than the limit of " + std::to_string(max_size) +
                                     " bytes; transfer stopped");
      break;
    case Next::consumer:
      failures.emplace_back(url, "could not store the response in memory");
      break;
    case Next::fail:
    case Next::retry:
    case Next::restart:
      failures.emplace_back(url, verdict.reason);
      if (i + 1 < bases.size()) {
        report_skipped(url, verdict.reason, join_url(bases[i + 1], filename));
      }
      break;
    }
  }

  if (rejection) {
    return fail(
        rejection->code,
        summarize_failures("no mirror served an acceptable " + std::string(filename), failures));
  }
  if (not_found == bases.size()) {
    return fail(ErrorCode::usage,
                summarize_failures(std::string(filename) + " not found on any mirror", failures) +
                    " (check the version label and the --mirror URLs)");
  }
  return fail(ErrorCode::network,
              summarize_failures("download of " + std::string(filename) + " failed on every mirror",
                                 failures) +
                  std::string(k_network_hint));
}

} // namespace cudnnctl::fetch
