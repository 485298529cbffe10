// SPDX-License-Identifier: Apache-2.0
#include "fetch/transfer.hpp"

#include "fetch/backoff.hpp"
#include "fetch/curl_handle.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

namespace cudnnctl::fetch {

namespace {

// State shared with the libcurl callbacks of one attempt.
struct Attempt {
  BodyTarget* target = nullptr;
  uint64_t offset = 0;
  // Of the latest response (reset at every status line: redirects, 100 Continue).
  long status = 0;
  std::optional<uint64_t> content_length;
  std::optional<ContentRange> content_range;
  std::optional<std::chrono::seconds> retry_after;
  bool body_started = false;
  uint64_t body_bytes = 0;
  Abort abort = Abort::none;

  void on_header(std::string_view line) {
    if (auto code = parse_status_line(line)) {
      status = *code;
      content_length.reset();
      content_range.reset();
      retry_after.reset();
      return;
    }
    if (auto v = header_value(line, "Content-Length")) {
      content_length = util::parse_u64(*v);
    } else if (auto r = header_value(line, "Content-Range")) {
      content_range = parse_content_range(*r);
    } else if (auto a = header_value(line, "Retry-After")) {
      retry_after = parse_retry_after(*a, std::chrono::system_clock::now());
    }
  }

  // The length of this response's body when announced. libcurl's file:// handler
  // announces the whole file's size even when it resumes, so subtract the offset there.
  std::optional<uint64_t> body_length() const {
    if (!content_length || status != 0) {
      return content_length;
    }
    return *content_length >= offset ? std::optional<uint64_t>(*content_length - offset)
                                     : std::nullopt;
  }

  // Checks made once, when the first body byte of the final response arrives.
  Abort check_start() const {
    if (status == 206) {
      // The body must continue exactly where our partial file ends.
      if (!content_range || content_range->first != offset) {
        return Abort::range_mismatch;
      }
    } else if (status == 200 && offset > 0) {
      // libcurl normally stops this itself (CURLE_RANGE_ERROR); never append a whole file.
      return Abort::range_ignored;
    }
    const auto length = body_length();
    if (target->limit && length && offset + *length > *target->limit) {
      return Abort::too_large; // announced too big: stop before the first byte is written
    }
    return Abort::none;
  }

  // Returns false to stop the transfer.
  bool on_body(const char* data, size_t size) {
    if (status >= 300) {
      return true; // an error page or a redirect's body: not ours, drop it
    }
    if (!body_started) {
      body_started = true;
      abort = check_start();
      if (abort != Abort::none) {
        return false;
      }
    }
    if (target->limit && offset + body_bytes + size > *target->limit) {
      abort = Abort::too_large;
      return false;
    }
    const auto length = body_length();
    const uint64_t announced = length ? offset + *length : 0;
    if (!target->write(std::string_view(data, size), announced)) {
      abort = Abort::consumer;
      return false;
    }
    body_bytes += size;
    return true;
  }
};

// C callbacks: no exception may cross into libcurl.
size_t header_callback(char* buffer, size_t size, size_t nitems, void* userdata) {
  auto* attempt = static_cast<Attempt*>(userdata);
  try {
    attempt->on_header(std::string_view(buffer, size * nitems));
  } catch (...) {
    attempt->abort = Abort::consumer;
    return 0;
  }
  return size * nitems;
}

size_t write_callback(char* data, size_t size, size_t nmemb, void* userdata) {
  auto* attempt = static_cast<Attempt*>(userdata);
  const size_t n = size * nmemb;
  try {
    if (n > 0 && !attempt->on_body(data, n)) {
      return 0; // != n: libcurl stops with CURLE_WRITE_ERROR
    }
  } catch (...) {
    attempt->abort = Abort::consumer;
    return 0;
  }
  return n;
}

double default_random() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

} // namespace

Result<AttemptReport> run_attempt(CurlHandle& curl, const std::string& url, const Options& options,
                                  BodyTarget& target) {
  Attempt attempt;
  attempt.target = &target;
  attempt.offset = target.offset();
  TRY(curl.prepare(url, options, attempt.offset,
                   CurlCallbacks{header_callback, write_callback, &attempt}));
  const CURLcode rc = curl.perform();

  AttemptReport report;
  report.curl_code = static_cast<int>(rc);
  report.curl_text = rc == CURLE_OK ? std::string() : curl.error_text(rc);
  // Our header parser saw the final status; fall back to libcurl's when it saw none.
  report.http_status = attempt.status != 0 ? attempt.status : curl.response_code();
  report.offset = attempt.offset;
  report.abort = attempt.abort;
  report.retry_after = attempt.retry_after;
  report.body_bytes = attempt.body_bytes;
  report.content_length = attempt.body_length();
  report.expected_total = target.expected_total;
  return report;
}

Result<Verdict> try_url(CurlHandle& curl, const std::string& url, const Options& options,
                        BodyTarget& target) {
  const int attempts = std::max(options.attempts_per_mirror, 1);
  bool free_restart = true;
  Verdict verdict;
  using Clock = std::chrono::steady_clock;
  const bool limited = options.url_deadline.count() > 0;
  const auto deadline = Clock::now() + options.url_deadline;
  Options timed = options;
  auto remaining = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  };
  for (int attempt = 1; attempt <= attempts;) {
    if (limited) {
      if (remaining().count() <= 0) {
        verdict.next = Next::fail;
        verdict.reason = "no complete answer within " +
                         std::to_string(options.url_deadline.count()) + " s (" + verdict.reason +
                         "); gave up on this mirror";
        return verdict;
      }
      timed.attempt_timeout = remaining();
    }
    const auto& trace = reporter().trace;
    if (trace) {
      trace("GET " + url + " (try " + std::to_string(attempt) + " of " + std::to_string(attempts) +
            ")");
    }
    TRY_ASSIGN(AttemptReport report, run_attempt(curl, url, timed, target));
    verdict = judge_attempt(report);
    if (trace && verdict.next != Next::done) {
      trace("  " + url + ": " + verdict.reason);
    }
    switch (verdict.next) {
    case Next::done:
    case Next::not_found:
    case Next::fail:
    case Next::too_large:
    case Next::consumer:
      return verdict;
    case Next::restart:
      TRY(target.restart());
      if (free_restart) {
        free_restart = false; // a server that ignores Range costs one extra request
        continue;
      }
      ++attempt;
      continue;
    case Next::retry:
      if (attempt == attempts) {
        break;
      }
      {
        const double unit = options.random ? options.random() : default_random();
        auto delay = backoff_delay(attempt, options.backoff_base, options.backoff_max,
                                   verdict.retry_after, unit);
        if (limited) {
          delay = std::max(std::chrono::milliseconds(0), std::min(delay, remaining()));
        }
        if (trace) {
          trace("  next try in " + util::fixed(static_cast<double>(delay.count()) / 1000.0, 1) +
                " s");
        }
        if (options.sleep) {
          options.sleep(delay);
        } else {
          std::this_thread::sleep_for(delay);
        }
      }
      ++attempt;
      continue;
    }
    break;
  }
  const int tries = attempts;
  verdict.next = Next::fail;
  verdict.reason += " (after " + std::to_string(tries) + (tries == 1 ? " try)" : " tries)");
  return verdict;
}

} // namespace cudnnctl::fetch
