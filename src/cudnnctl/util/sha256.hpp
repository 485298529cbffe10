// SPDX-License-Identifier: Apache-2.0
// Streaming SHA-256 through OpenSSL EVP (uses the CPU's SHA extensions).
#pragma once

#include "core/result.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct evp_md_ctx_st; // EVP_MD_CTX, forward-declared so only sha256.cpp sees OpenSSL

namespace cudnnctl::util {

// --- Interface ---

// The pieces a repack's sidecar hashes one by one (release/sidecar.hpp): a stream or a file
// hashed in pieces is checked on several threads, not at one thread's SHA-256 pace.
inline constexpr size_t k_sha256_chunk = size_t{1} << 20;

class Sha256 {
public:
  Sha256(); // throws std::runtime_error when OpenSSL cannot allocate a context
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  ~Sha256();
  void update(const void* data, size_t size);
  // Lower-case hex digest; the object must not be updated afterwards.
  [[nodiscard]] std::string hex_final();

private:
  struct Deleter {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  std::unique_ptr<evp_md_ctx_st, Deleter> m_ctx;
};

// Copies `in` to `out` up to the end of `in` (1 MiB reads, EINTR retried), feeding `hash`
// with every byte when given. Errors name `src` (reading) or `dst` (writing).
[[nodiscard]] Status copy_fd(int in, int out, std::string_view src, std::string_view dst,
                             Sha256* hash = nullptr);

// Hashes a whole file; also returns its size through `size_out` when given.
[[nodiscard]] Result<std::string> sha256_file(const std::filesystem::path& path,
                                              uint64_t* size_out = nullptr);
[[nodiscard]] std::string sha256_hex(std::string_view data);
// The digest of every `chunk` bytes of the open file `fd` from offset 0 to its end (pread: its
// offset does not move; the last piece may be shorter; none for an empty file). Errors name
// `where`.
[[nodiscard]] Result<std::vector<std::string>> sha256_chunks(int fd, std::string_view where,
                                                             size_t chunk = k_sha256_chunk);

// True when `s` is 64 lower- or upper-case hex digits.
bool is_sha256_hex(std::string_view s);

} // namespace cudnnctl::util
