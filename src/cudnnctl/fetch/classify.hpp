// SPDX-License-Identifier: Apache-2.0
// Pure pieces of the download logic: header parsing, URL helpers, and the decision what to
// do after one transfer attempt. No libcurl here (curl codes are passed as int), so every
// rule is tested with tables.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::fetch {

// --- Interface ---

// Lower-case scheme of `url` ("HTTPS://x" -> "https"); empty when there is none.
std::string url_scheme(std::string_view url);

// The protocols a redirect from `url` may lead to: "http,https" when `url` is plain http,
// "https" otherwise (an https download is never downgraded; file:// does not redirect).
std::string redirect_protocols(std::string_view url);

// "HTTP/1.1 206 Partial Content" or "HTTP/2 200" -> the status code; other lines: nullopt.
std::optional<long> parse_status_line(std::string_view line);

// One header line "Name: value\r\n" -> the trimmed value when the name equals `name`
// (case-insensitive); nullopt for other headers and for status lines.
std::optional<std::string_view> header_value(std::string_view line, std::string_view name);

struct ContentRange {
  uint64_t first = 0;
  uint64_t last = 0;
  std::optional<uint64_t> complete_length; // "*" -> nullopt
};
// "bytes 100-199/200" or "bytes 100-199/*" -> {100, 199, 200 or nullopt}. The unit is
// case-insensitive; last < first, garbage, and "bytes */200" (a 416 answer) give nullopt.
std::optional<ContentRange> parse_content_range(std::string_view value);

// What an HTTP status means for the mirror that sent it.
enum class StatusClass {
  ok,        // 200, 206: body follows
  not_found, // 404, 410: the file is not there; no retry on that mirror
  retry,     // 408, 429, 500, 502, 503, 504: transient, retry with backoff
  fail,      // anything else: that mirror fails at once
};
StatusClass classify_status(long status);

// What a libcurl result code (CURLcode as int) means.
enum class CurlClass {
  ok,
  transient, // connect/resolve failures, timeouts and low-speed aborts, partial body, recv/send
  tls,       // certificate or TLS handshake failure: no retry, suggest --cacert
  not_found, // file:// path missing or unreadable
  range,     // resume refused (server ignored Range, or offset past the end): start from 0
  callback,  // our write callback stopped the transfer: its own reason decides
  fail,      // anything else (bad URL, refused redirect, too many redirects, ...)
};
CurlClass classify_curl_code(int code);

// Why our write callback stopped a transfer.
enum class Abort {
  none,
  too_large,      // more bytes than the expected size / max_size
  range_ignored,  // resume asked, server answered 200 with the whole body
  range_mismatch, // 206 whose Content-Range does not start at the requested offset
  consumer,       // writing the file or the stream sink failed (the caller keeps the error)
};

// Everything known after one attempt on one URL.
struct AttemptReport {
  int curl_code = 0;     // CURLcode
  std::string curl_text; // the error buffer, or curl_easy_strerror when that is empty
  long http_status = 0;  // final response's status; 0 for file:// or when none arrived
  uint64_t offset = 0;   // resume offset the attempt asked for
  Abort abort = Abort::none;
  std::optional<std::chrono::seconds> retry_after; // from the final response
  uint64_t body_bytes = 0;                         // body bytes accepted in this attempt
  std::optional<uint64_t> content_length;          // of this response's body, when announced
  std::optional<uint64_t> expected_total;          // whole file size when known (archives)
};

// What the caller does next.
enum class Next {
  done,      // the body is complete as far as the transport knows: verify it
  retry,     // transient: back off (honouring retry_after), resume, try the same URL again
  restart,   // resume impossible: discard the partial, try the same URL again from byte 0
  not_found, // the file is not on this mirror
  fail,      // this mirror failed; try the next
  too_large, // the body went past the allowed size (integrity problem for archives)
  consumer,  // our own side failed (disk, sink): the caller's stored error decides
};

struct Verdict {
  Next next = Next::fail;
  std::string reason; // one line for the summary ("HTTP 404", "Connection refused")
  std::optional<std::chrono::seconds> retry_after;
};

// The decision table for one attempt (see classify.cpp for the order of the rules).
Verdict judge_attempt(const AttemptReport& report);

// What to do when every mirror failed on the network; appended to those messages.
inline constexpr std::string_view k_network_hint =
    " (check the mirror URLs, the network and proxy settings (http_proxy is read in lower "
    "case only), and pass --cacert when a mirror uses a private CA)";

// "download failed on every mirror: URL: reason; URL: reason" (the first part given).
std::string summarize_failures(std::string_view head,
                               const std::vector<std::pair<std::string, std::string>>& failures);

} // namespace cudnnctl::fetch
