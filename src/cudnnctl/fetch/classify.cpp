// SPDX-License-Identifier: Apache-2.0
#include "fetch/classify.hpp"

#include "fetch/fetch.hpp"
#include "util/strings.hpp"

#include <curl/curl.h>

namespace cudnnctl::fetch {

static char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

static bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) {
      return false;
    }
  }
  return true;
}

std::string url_scheme(std::string_view url) {
  auto colon = url.find("://");
  if (colon == std::string_view::npos || colon == 0) {
    return {};
  }
  std::string scheme;
  for (char c : url.substr(0, colon)) {
    const char l = ascii_lower(c);
    if (!((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '+' || l == '-' || l == '.')) {
      return {};
    }
    scheme += l;
  }
  return scheme;
}

std::string redirect_protocols(std::string_view url) {
  return url_scheme(url) == "http" ? "http,https" : "https";
}

// Characters that cannot appear literally in a URL path (or would end it: '?', '#').
// '%' is kept: manifests may already carry percent-escapes.
static bool needs_escape(unsigned char c) {
  if (c <= 0x20 || c >= 0x7f) {
    return true;
  }
  switch (c) {
  case '"':
  case '<':
  case '>':
  case '\\':
  case '^':
  case '`':
  case '{':
  case '|':
  case '}':
  case '#':
  case '?':
    return true;
  default:
    return false;
  }
}

std::string join_url(std::string_view base, std::string_view relative) {
  while (!relative.empty() && relative.front() == '/') {
    relative.remove_prefix(1);
  }
  // Keep "scheme://" intact: only slashes after it are trimmed ("file:///" -> "file://" +
  // "/" + relative -> "file:///relative").
  const auto scheme_end = base.find("://");
  const size_t keep = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  while (base.size() > keep && base.back() == '/') {
    base.remove_suffix(1);
  }
  std::string out(base);
  if (relative.empty()) {
    return out;
  }
  out += '/';
  static constexpr char k_hex[] = "0123456789ABCDEF";
  for (char ch : relative) {
    const auto c = static_cast<unsigned char>(ch);
    if (needs_escape(c)) {
      out += '%';
      out += k_hex[c >> 4];
      out += k_hex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

std::optional<long> parse_status_line(std::string_view line) {
  line = util::trim(line);
  if (!line.starts_with("HTTP/")) {
    return std::nullopt;
  }
  auto space = line.find(' ');
  if (space == std::string_view::npos) {
    return std::nullopt;
  }
  auto rest = line.substr(space + 1);
  auto code = rest.substr(0, rest.find(' '));
  auto value = util::parse_u64(code);
  if (code.size() != 3 || !value || *value < 100) {
    return std::nullopt;
  }
  return static_cast<long>(*value);
}

std::optional<std::string_view> header_value(std::string_view line, std::string_view name) {
  auto colon = line.find(':');
  if (colon == std::string_view::npos || !iequals(line.substr(0, colon), name)) {
    return std::nullopt;
  }
  return util::trim(line.substr(colon + 1));
}

std::optional<ContentRange> parse_content_range(std::string_view value) {
  value = util::trim(value);
  if (value.size() < 6 || !iequals(value.substr(0, 6), "bytes ")) {
    return std::nullopt;
  }
  value = util::trim(value.substr(6));
  auto dash = value.find('-');
  auto slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) {
    return std::nullopt;
  }
  auto first = util::parse_u64(value.substr(0, dash));
  auto last = util::parse_u64(value.substr(dash + 1, slash - dash - 1));
  if (!first || !last || *last < *first) {
    return std::nullopt;
  }
  ContentRange range{*first, *last, std::nullopt};
  auto total = value.substr(slash + 1);
  if (total != "*") {
    auto complete = util::parse_u64(total);
    if (!complete || *complete <= *last) {
      return std::nullopt;
    }
    range.complete_length = *complete;
  }
  return range;
}

StatusClass classify_status(long status) {
  switch (status) {
  case 200:
  case 206:
    return StatusClass::ok;
  case 404:
  case 410:
    return StatusClass::not_found;
  case 408:
  case 429:
  case 500:
  case 502:
  case 503:
  case 504:
    return StatusClass::retry;
  default:
    return StatusClass::fail;
  }
}

CurlClass classify_curl_code(int code) {
  switch (static_cast<CURLcode>(code)) {
  case CURLE_OK:
    return CurlClass::ok;
  case CURLE_COULDNT_RESOLVE_PROXY:
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_CONNECT:
  case CURLE_OPERATION_TIMEDOUT: // connect timeout and the low-speed abort both end here
  case CURLE_PARTIAL_FILE:
  case CURLE_GOT_NOTHING:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
  case CURLE_HTTP3:
  case CURLE_QUIC_CONNECT_ERROR:
    return CurlClass::transient;
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_PEER_FAILED_VERIFICATION:
  case CURLE_SSL_CERTPROBLEM:
  case CURLE_SSL_CIPHER:
  case CURLE_SSL_CACERT_BADFILE:
  case CURLE_SSL_CRL_BADFILE:
  case CURLE_SSL_ISSUER_ERROR:
  case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
  case CURLE_SSL_INVALIDCERTSTATUS:
  case CURLE_SSL_ENGINE_NOTFOUND:
  case CURLE_SSL_ENGINE_SETFAILED:
  case CURLE_SSL_ENGINE_INITFAILED:
  case CURLE_SSL_CLIENTCERT:
  case CURLE_USE_SSL_FAILED:
    return CurlClass::tls;
  case CURLE_FILE_COULDNT_READ_FILE:
    return CurlClass::not_found;
  case CURLE_RANGE_ERROR:
  case CURLE_BAD_DOWNLOAD_RESUME:
    return CurlClass::range;
  case CURLE_WRITE_ERROR:
  case CURLE_ABORTED_BY_CALLBACK:
    return CurlClass::callback;
  default:
    return CurlClass::fail;
  }
}

static std::string http_reason(long status) {
  return "HTTP " + std::to_string(status);
}

Verdict judge_attempt(const AttemptReport& r) {
  // 1. Our own callback's reason is the most precise one.
  switch (r.abort) {
  case Abort::too_large:
    return {Next::too_large, "the server sent more bytes than expected", std::nullopt};
  case Abort::range_ignored:
    return {Next::restart,
            "server ignored the Range request for byte " + std::to_string(r.offset) +
                " and sent the whole file",
            std::nullopt};
  case Abort::range_mismatch:
    return {Next::restart,
            "Content-Range does not start at the requested byte " + std::to_string(r.offset),
            std::nullopt};
  case Abort::consumer:
    return {Next::consumer, "writing the download failed", std::nullopt};
  case Abort::none:
    break;
  }
  // 2. A resume past the server's end of file: our partial is not a prefix of its file.
  if (r.offset > 0 && r.http_status == 416) {
    return {Next::restart, "HTTP 416 for a resume at byte " + std::to_string(r.offset),
            std::nullopt};
  }
  // 3. An HTTP error status decides, whatever libcurl made of the rest.
  if (r.http_status >= 400) {
    switch (classify_status(r.http_status)) {
    case StatusClass::not_found:
      return {Next::not_found, http_reason(r.http_status), std::nullopt};
    case StatusClass::retry:
      return {Next::retry, http_reason(r.http_status), r.retry_after};
    case StatusClass::ok:
    case StatusClass::fail:
      break;
    }
    return {Next::fail, http_reason(r.http_status), std::nullopt};
  }
  // 4. libcurl's result.
  switch (classify_curl_code(r.curl_code)) {
  case CurlClass::ok:
    break;
  case CurlClass::transient:
    return {Next::retry, r.curl_text, std::nullopt};
  case CurlClass::tls:
    return {Next::fail,
            r.curl_text + " (TLS verification failed; if the mirror uses a private CA, pass "
                          "--cacert FILE)",
            std::nullopt};
  case CurlClass::not_found:
    return {Next::not_found, r.curl_text, std::nullopt};
  case CurlClass::range:
    return {Next::restart, r.curl_text, std::nullopt};
  case CurlClass::callback:
  case CurlClass::fail:
    if (r.curl_code == CURLE_UNSUPPORTED_PROTOCOL && r.http_status >= 300 && r.http_status < 400) {
      return {Next::fail,
              "refused a redirect to another protocol (" + r.curl_text +
                  "); an https download is only redirected to https",
              std::nullopt};
    }
    return {Next::fail, r.curl_text, std::nullopt};
  }
  if (r.http_status != 0 && classify_status(r.http_status) != StatusClass::ok) {
    return {Next::fail, "unexpected " + http_reason(r.http_status), std::nullopt};
  }
  // 5. A body that ended early without a Content-Length (connection closed) is resumable.
  if (r.expected_total && !r.content_length && r.offset + r.body_bytes < *r.expected_total) {
    return {Next::retry,
            "connection closed after " + std::to_string(r.offset + r.body_bytes) + " of " +
                std::to_string(*r.expected_total) + " bytes",
            std::nullopt};
  }
  return {Next::done, {}, std::nullopt};
}

std::string summarize_failures(std::string_view head,
                               const std::vector<std::pair<std::string, std::string>>& failures) {
  std::string out(head);
  out += ": ";
  for (size_t i = 0; i < failures.size(); ++i) {
    if (i > 0) {
      out += "; ";
    }
    out += failures[i].first;
    out += ": ";
    out += failures[i].second;
  }
  return out;
}

} // namespace cudnnctl::fetch
