// SPDX-License-Identifier: Apache-2.0
#include "verify/verify.hpp"

#include "util/sha256.hpp"

#include <algorithm>
#include <sys/stat.h>

namespace cudnnctl::verify {

static std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'F') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

Status compare_digest(std::string_view what, uint64_t expected_size,
                      std::string_view expected_sha256, uint64_t got_size,
                      std::string_view got_sha256) {
  if (got_size != expected_size) {
    return fail(ErrorCode::integrity, "size mismatch for " + std::string(what) +
                                          ": manifest says " + std::to_string(expected_size) +
                                          " bytes, got " + std::to_string(got_size));
  }
  if (lower(got_sha256) != lower(expected_sha256)) {
    return fail(ErrorCode::integrity, "sha256 mismatch for " + std::string(what) + ": expected " +
                                          lower(expected_sha256) + ", got " + lower(got_sha256));
  }
  return {};
}

Status compare_chunks(std::string_view what, uint64_t expected_size,
                      const std::vector<std::string>& expected, uint64_t got_size,
                      const std::vector<std::string>& got, uint64_t chunk_bytes) {
  TRY(compare_digest(what, expected_size, "", got_size, ""));
  std::vector<std::string> want;
  std::vector<std::string> have;
  for (const auto& d : expected) {
    want.push_back(lower(d));
  }
  for (const auto& d : got) {
    have.push_back(lower(d));
  }
  const std::optional<size_t> i = first_difference(want, have);
  if (!i) {
    return {};
  }
  const uint64_t from = *i * chunk_bytes;
  const uint64_t to = std::min<uint64_t>(from + chunk_bytes, got_size);
  return fail(ErrorCode::integrity, "sha256 mismatch for " + std::string(what) + ": bytes " +
                                        std::to_string(from) + " to " + std::to_string(to) +
                                        ": expected " + (*i < want.size() ? want[*i] : "(none)") +
                                        ", got " + (*i < have.size() ? have[*i] : "(none)"));
}

std::optional<size_t> first_difference(const std::vector<std::string>& a,
                                       const std::vector<std::string>& b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  if (ia == a.end() && ib == b.end()) {
    return std::nullopt;
  }
  return static_cast<size_t>(ia - a.begin());
}

Status compare_stream(std::string_view what, uint64_t expected_size,
                      std::string_view expected_sha256,
                      const std::vector<std::string>& expected_chunks, uint64_t got_size,
                      util::Sha256Worker& hash) {
  if (hash.chunked()) {
    return compare_chunks(what, expected_size, expected_chunks, got_size, hash.chunk_digests(),
                          util::k_sha256_chunk);
  }
  return compare_digest(what, expected_size, expected_sha256, got_size, hash.hex_final());
}

Status verify_file(const std::filesystem::path& path, uint64_t expected_size,
                   std::string_view expected_sha256) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return fail_errno("cannot stat " + path.string(), errno);
  }
  if (static_cast<uint64_t>(st.st_size) != expected_size) {
    return compare_digest(path.string(), expected_size, expected_sha256,
                          static_cast<uint64_t>(st.st_size), "");
  }
  uint64_t size = 0;
  TRY_ASSIGN(std::string digest, util::sha256_file(path, &size));
  return compare_digest(path.string(), expected_size, expected_sha256, size, digest);
}

} // namespace cudnnctl::verify
