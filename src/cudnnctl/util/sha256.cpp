// SPDX-License-Identifier: Apache-2.0
#include "util/sha256.hpp"

#include "util/fs.hpp"

#include <cerrno>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace cudnnctl::util {

void Sha256::Deleter::operator()(evp_md_ctx_st* ctx) const {
  EVP_MD_CTX_free(ctx);
}

Sha256::Sha256() : m_ctx(EVP_MD_CTX_new()) {
  if (!m_ctx || EVP_DigestInit_ex(m_ctx.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
  }
}
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;
Sha256::~Sha256() = default;

void Sha256::update(const void* data, size_t size) {
  if (EVP_DigestUpdate(m_ctx.get(), data, size) != 1) {
    throw std::runtime_error("OpenSSL: EVP_DigestUpdate failed");
  }
}

std::string Sha256::hex_final() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(m_ctx.get(), md, &len) != 1) {
    throw std::runtime_error("OpenSSL: EVP_DigestFinal_ex failed");
  }
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out += digits[md[i] >> 4];
    out += digits[md[i] & 15];
  }
  return out;
}

Status copy_fd(int in, int out, std::string_view src, std::string_view dst, Sha256* hash) {
  std::vector<char> buf(1 << 20);
  while (true) {
    TRY_ASSIGN(size_t n, read_some(in, buf.data(), buf.size(), std::string(src)));
    if (n == 0) {
      return {};
    }
    if (hash) {
      hash->update(buf.data(), n);
    }
    TRY(write_all(out, buf.data(), n, dst));
  }
}

Result<std::string> sha256_file(const std::filesystem::path& path, uint64_t* size_out) {
  TRY_ASSIGN(Fd fd, open_fd(path, O_RDONLY));
  Sha256 hasher;
  std::vector<char> buf(1 << 20);
  uint64_t total = 0;
  while (true) {
    TRY_ASSIGN(size_t n, read_some(fd.get(), buf.data(), buf.size(), path));
    if (n == 0) {
      break;
    }
    hasher.update(buf.data(), n);
    total += n;
  }
  if (size_out) {
    *size_out = total;
  }
  return hasher.hex_final();
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data.data(), data.size());
  return h.hex_final();
}

Result<std::vector<std::string>> sha256_chunks(int fd, std::string_view where, size_t chunk) {
  std::vector<std::string> out;
  std::vector<char> buf(chunk);
  for (uint64_t offset = 0;;) {
    size_t got = 0; // one piece: pread until it is full or the file ends
    while (got < chunk) {
      const ssize_t n =
          ::pread(fd, buf.data() + got, chunk - got, static_cast<off_t>(offset + got));
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        return fail_errno("cannot read " + std::string(where), errno);
      }
      if (n == 0) {
        break;
      }
      got += static_cast<size_t>(n);
    }
    if (got == 0) {
      return out;
    }
    Sha256 h;
    h.update(buf.data(), got);
    out.push_back(h.hex_final());
    if (got < chunk) {
      return out;
    }
    offset += got;
  }
}

bool is_sha256_hex(std::string_view s) {
  if (s.size() != 64) {
    return false;
  }
  for (char c : s) {
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) {
      return false;
    }
  }
  return true;
}

} // namespace cudnnctl::util
