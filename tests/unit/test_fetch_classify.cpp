// SPDX-License-Identifier: Apache-2.0
#include "fetch/classify.hpp"
#include "fetch/fetch.hpp"

#include <catch2/catch.hpp>
#include <curl/curl.h>

using namespace cudnnctl::fetch;

TEST_CASE("join_url joins base and relative path", "[fetch][url]") {
  struct Row {
    const char* base;
    const char* relative;
    const char* expected;
  };
  const Row rows[] = {
      {"http://m/a/", "cudnn/x", "http://m/a/cudnn/x"},
      {"http://m/a", "cudnn/x", "http://m/a/cudnn/x"},
      {"http://m/a//", "/cudnn/x", "http://m/a/cudnn/x"},
      {"http://m", "x.json", "http://m/x.json"},
      {"http://m/", "x.json", "http://m/x.json"},
      {"https://developer.download.nvidia.com/compute/cudnn/redist/",
       "cudnn/linux-x86_64/cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz",
       "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/"
       "cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz"},
      {"file:///srv/mirror", "cudnn/x", "file:///srv/mirror/cudnn/x"},
      {"file:///srv/mirror/", "cudnn/x", "file:///srv/mirror/cudnn/x"},
      {"file:///", "x", "file:///x"},
      {"http://m/a/", "", "http://m/a"},
      {"http://m/a", "dir with space/x", "http://m/a/dir%20with%20space/x"},
      {"http://m/a", "x?y#z", "http://m/a/x%3Fy%23z"},
      {"http://m/a", "already%20escaped", "http://m/a/already%20escaped"},
      {"http://m/a", "caf\xc3\xa9", "http://m/a/caf%C3%A9"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.base, row.relative);
    CHECK(join_url(row.base, row.relative) == row.expected);
  }
}

TEST_CASE("url_scheme and redirect_protocols", "[fetch][url]") {
  CHECK(url_scheme("http://x/y") == "http");
  CHECK(url_scheme("HTTPS://x/y") == "https");
  CHECK(url_scheme("file:///x") == "file");
  CHECK(url_scheme("/just/a/path") == "");
  CHECK(url_scheme("://x") == "");
  CHECK(url_scheme("ht tp://x") == "");
  CHECK(redirect_protocols("http://m/x") == "http,https");
  CHECK(redirect_protocols("HTTP://m/x") == "http,https");
  CHECK(redirect_protocols("https://m/x") == "https");
  CHECK(redirect_protocols("file:///x") == "https");
  CHECK(redirect_protocols("garbage") == "https");
}

TEST_CASE("parse_status_line", "[fetch][http]") {
  CHECK(parse_status_line("HTTP/1.1 200 OK\r\n") == 200L);
  CHECK(parse_status_line("HTTP/1.1 206 Partial Content\r\n") == 206L);
  CHECK(parse_status_line("HTTP/2 404 \r\n") == 404L);
  CHECK(parse_status_line("HTTP/2 503\r\n") == 503L);
  CHECK(parse_status_line("HTTP/1.0 302 Found\r\n") == 302L);
  CHECK(!parse_status_line("Content-Length: 5\r\n"));
  CHECK(!parse_status_line("\r\n"));
  CHECK(!parse_status_line("HTTP/1.1\r\n"));
  CHECK(!parse_status_line("HTTP/1.1 20 OK\r\n"));
  CHECK(!parse_status_line("HTTP/1.1 2000 OK\r\n"));
  CHECK(!parse_status_line("HTTP/1.1 abc OK\r\n"));
  CHECK(!parse_status_line("HTTP/1.1 099 Odd\r\n"));
}

TEST_CASE("header_value matches names case-insensitively", "[fetch][http]") {
  CHECK(header_value("Content-Range: bytes 1-2/3\r\n", "Content-Range") == "bytes 1-2/3");
  CHECK(header_value("content-range:bytes 1-2/3\r\n", "Content-Range") == "bytes 1-2/3");
  CHECK(header_value("RETRY-AFTER:   30 \r\n", "Retry-After") == "30");
  CHECK(header_value("Content-Length: 7\r\n", "Content-Range") == std::nullopt);
  CHECK(header_value("Content-Length 7\r\n", "Content-Length") == std::nullopt);
  CHECK(header_value("HTTP/1.1 200 OK\r\n", "Content-Length") == std::nullopt);
  CHECK(header_value("X-Content-Length: 7\r\n", "Content-Length") == std::nullopt);
}

TEST_CASE("parse_content_range", "[fetch][http]") {
  struct Row {
    const char* value;
    bool ok;
    uint64_t first;
    uint64_t last;
    std::optional<uint64_t> complete;
  };
  const Row rows[] = {
      {"bytes 100-199/200", true, 100, 199, 200},
      {"bytes 0-0/1", true, 0, 0, 1},
      {"BYTES 5-9/*", true, 5, 9, std::nullopt},
      {"  bytes  1500000-2999999/3000000 ", true, 1500000, 2999999, 3000000},
      {"bytes 0-18446744073709551614/18446744073709551615", true, 0, 18446744073709551614ull,
       18446744073709551615ull},
      {"bytes */200", false, 0, 0, std::nullopt},
      {"bytes 200-100/300", false, 0, 0, std::nullopt},
      {"bytes 100-199/199", false, 0, 0, std::nullopt}, // last past the end
      {"bytes 100-199", false, 0, 0, std::nullopt},
      {"bytes -199/200", false, 0, 0, std::nullopt},
      {"bytes 100-/200", false, 0, 0, std::nullopt},
      {"items 1-2/3", false, 0, 0, std::nullopt},
      {"bytes=100-199/200", false, 0, 0, std::nullopt},
      {"bytes 1-2/x", false, 0, 0, std::nullopt},
      {"bytes 99999999999999999999-1/2", false, 0, 0, std::nullopt},
      {"", false, 0, 0, std::nullopt},
  };
  for (const auto& row : rows) {
    CAPTURE(row.value);
    auto got = parse_content_range(row.value);
    REQUIRE(got.has_value() == row.ok);
    if (got) {
      CHECK(got->first == row.first);
      CHECK(got->last == row.last);
      CHECK(got->complete_length == row.complete);
    }
  }
}

TEST_CASE("classify_status", "[fetch][http]") {
  struct Row {
    long status;
    StatusClass expected;
  };
  const Row rows[] = {
      {200, StatusClass::ok},        {206, StatusClass::ok},    {404, StatusClass::not_found},
      {410, StatusClass::not_found}, {408, StatusClass::retry}, {429, StatusClass::retry},
      {500, StatusClass::retry},     {502, StatusClass::retry}, {503, StatusClass::retry},
      {504, StatusClass::retry},     {400, StatusClass::fail},  {401, StatusClass::fail},
      {403, StatusClass::fail},      {405, StatusClass::fail},  {416, StatusClass::fail},
      {451, StatusClass::fail},      {501, StatusClass::fail},  {505, StatusClass::fail},
      {201, StatusClass::fail},      {204, StatusClass::fail},  {301, StatusClass::fail},
      {304, StatusClass::fail},      {0, StatusClass::fail},
  };
  for (const auto& row : rows) {
    CAPTURE(row.status);
    CHECK(classify_status(row.status) == row.expected);
  }
}

TEST_CASE("classify_curl_code", "[fetch][http]") {
  struct Row {
    CURLcode code;
    CurlClass expected;
  };
  const Row rows[] = {
      {CURLE_OK, CurlClass::ok},
      {CURLE_COULDNT_CONNECT, CurlClass::transient},
      {CURLE_COULDNT_RESOLVE_HOST, CurlClass::transient},
      {CURLE_OPERATION_TIMEDOUT, CurlClass::transient},
      {CURLE_PARTIAL_FILE, CurlClass::transient},
      {CURLE_RECV_ERROR, CurlClass::transient},
      {CURLE_SEND_ERROR, CurlClass::transient},
      {CURLE_GOT_NOTHING, CurlClass::transient},
      {CURLE_HTTP2_STREAM, CurlClass::transient},
      {CURLE_PEER_FAILED_VERIFICATION, CurlClass::tls},
      {CURLE_SSL_CACERT_BADFILE, CurlClass::tls},
      {CURLE_SSL_CONNECT_ERROR, CurlClass::tls},
      {CURLE_SSL_CERTPROBLEM, CurlClass::tls},
      {CURLE_FILE_COULDNT_READ_FILE, CurlClass::not_found},
      {CURLE_RANGE_ERROR, CurlClass::range},
      {CURLE_BAD_DOWNLOAD_RESUME, CurlClass::range},
      {CURLE_WRITE_ERROR, CurlClass::callback},
      {CURLE_UNSUPPORTED_PROTOCOL, CurlClass::fail},
      {CURLE_URL_MALFORMAT, CurlClass::fail},
      {CURLE_TOO_MANY_REDIRECTS, CurlClass::fail},
      {CURLE_OUT_OF_MEMORY, CurlClass::fail},
  };
  for (const auto& row : rows) {
    CAPTURE(row.code);
    CHECK(classify_curl_code(static_cast<int>(row.code)) == row.expected);
  }
}

namespace {
AttemptReport report(CURLcode code, long status, uint64_t offset = 0) {
  AttemptReport r;
  r.curl_code = static_cast<int>(code);
  r.curl_text = code == CURLE_OK ? "" : curl_easy_strerror(code);
  r.http_status = status;
  r.offset = offset;
  return r;
}
AttemptReport with_abort(AttemptReport r, Abort abort) {
  r.abort = abort;
  return r;
}
} // namespace

TEST_CASE("judge_attempt decision table", "[fetch][http]") {
  using std::chrono::seconds;
  AttemptReport retry_after_503 = report(CURLE_OK, 503);
  retry_after_503.retry_after = seconds(5);
  AttemptReport short_close = report(CURLE_OK, 200);
  short_close.expected_total = 100;
  short_close.body_bytes = 50;
  AttemptReport short_announced = short_close;
  short_announced.content_length = 50;
  AttemptReport resumed_close = report(CURLE_OK, 206, 40);
  resumed_close.expected_total = 100;
  resumed_close.body_bytes = 60;
  AttemptReport resumed_short = resumed_close;
  resumed_short.body_bytes = 10;

  struct Row {
    const char* what;
    AttemptReport report;
    Next next;
    const char* reason_part;
  };
  const Row rows[] = {
      {"abort too large", with_abort(report(CURLE_WRITE_ERROR, 200), Abort::too_large),
       Next::too_large, "more bytes"},
      {"abort range ignored", with_abort(report(CURLE_WRITE_ERROR, 200, 10), Abort::range_ignored),
       Next::restart, "ignored the Range"},
      {"abort range mismatch",
       with_abort(report(CURLE_WRITE_ERROR, 206, 10), Abort::range_mismatch), Next::restart,
       "Content-Range"},
      {"abort consumer", with_abort(report(CURLE_WRITE_ERROR, 200), Abort::consumer),
       Next::consumer, ""},
      {"416 on resume", report(CURLE_OK, 416, 10), Next::restart, "416"},
      {"416 without resume", report(CURLE_OK, 416, 0), Next::fail, "HTTP 416"},
      {"404", report(CURLE_OK, 404), Next::not_found, "HTTP 404"},
      {"410", report(CURLE_OK, 410), Next::not_found, "HTTP 410"},
      {"404 while resuming", report(CURLE_RANGE_ERROR, 404, 10), Next::not_found, "HTTP 404"},
      {"503", report(CURLE_OK, 503), Next::retry, "HTTP 503"},
      {"429", report(CURLE_OK, 429), Next::retry, "HTTP 429"},
      {"403", report(CURLE_OK, 403), Next::fail, "HTTP 403"},
      {"501", report(CURLE_OK, 501), Next::fail, "HTTP 501"},
      {"200 refused on resume", report(CURLE_RANGE_ERROR, 200, 10), Next::restart, ""},
      {"file resume past end", report(CURLE_BAD_DOWNLOAD_RESUME, 0, 10), Next::restart, ""},
      {"refused", report(CURLE_COULDNT_CONNECT, 0), Next::retry, "connect"},
      {"timeout", report(CURLE_OPERATION_TIMEDOUT, 200), Next::retry, "Timeout"},
      {"partial body", report(CURLE_PARTIAL_FILE, 206, 10), Next::retry, ""},
      {"tls", report(CURLE_PEER_FAILED_VERIFICATION, 0), Next::fail, "--cacert"},
      {"tls bundle", report(CURLE_SSL_CACERT_BADFILE, 0), Next::fail, "--cacert"},
      {"file missing", report(CURLE_FILE_COULDNT_READ_FILE, 0), Next::not_found, ""},
      {"https to http", report(CURLE_UNSUPPORTED_PROTOCOL, 302), Next::fail, "redirect"},
      {"too many redirects", report(CURLE_TOO_MANY_REDIRECTS, 302), Next::fail, ""},
      {"bad URL", report(CURLE_URL_MALFORMAT, 0), Next::fail, ""},
      {"200", report(CURLE_OK, 200), Next::done, ""},
      {"206", report(CURLE_OK, 206, 10), Next::done, ""},
      {"file", report(CURLE_OK, 0), Next::done, ""},
      {"204", report(CURLE_OK, 204), Next::fail, "unexpected HTTP 204"},
      {"304", report(CURLE_OK, 304), Next::fail, "unexpected HTTP 304"},
      {"closed early without length", short_close, Next::retry, "50 of 100"},
      {"short with length", short_announced, Next::done, ""},
      {"resumed to the end", resumed_close, Next::done, ""},
      {"resumed, closed early", resumed_short, Next::retry, "50 of 100"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    Verdict v = judge_attempt(row.report);
    CHECK(v.next == row.next);
    CHECK(v.reason.find(row.reason_part) != std::string::npos);
  }
  Verdict v = judge_attempt(retry_after_503);
  CHECK(v.next == Next::retry);
  CHECK(v.retry_after == seconds(5));
  // Retry-After means nothing on a non-retryable status.
  AttemptReport gone = report(CURLE_OK, 404);
  gone.retry_after = seconds(5);
  CHECK(!judge_attempt(gone).retry_after);
}

TEST_CASE("summarize_failures lists every mirror on one line", "[fetch][http]") {
  CHECK(summarize_failures("download failed on every mirror",
                           {{"http://a/x", "HTTP 404"}, {"http://b/x", "Connection refused"}}) ==
        "download failed on every mirror: http://a/x: HTTP 404; http://b/x: Connection refused");
  CHECK(summarize_failures("head", {{"u", "r"}}) == "head: u: r");
}
