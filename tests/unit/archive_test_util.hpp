// SPDX-License-Identifier: Apache-2.0
// Test-only helpers: build tar archives with libarchive's writer from raw entries (so tests
// control names, types, modes, link targets and sizes), and in-memory ByteSources.
#pragma once

#include "archive/extract.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <archive.h>
#include <archive_entry.h>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <vector>

namespace archive_test {

namespace fs = std::filesystem;

enum class Type { file, dir, symlink, hardlink, chr, blk, fifo };

struct TEntry {
  std::string name;
  Type type = Type::file;
  std::string data;
  unsigned mode = 0644;
  std::string link;  // symlink or hard-link target, stored verbatim
  int64_t size = -1; // header size; -1: data.size(). Larger: the writer pads with NULs.
  // Files: the data regions {offset, length} of a sparse file; `data` is the whole logical
  // content (the writer stores only the regions).
  std::vector<std::pair<int64_t, int64_t>> sparse;
};

inline TEntry mk_file(std::string name, std::string data, unsigned mode = 0644) {
  return TEntry{std::move(name), Type::file, std::move(data), mode, "", -1, {}};
}
inline TEntry mk_dir(std::string name, unsigned mode = 0755) {
  return TEntry{std::move(name), Type::dir, "", mode, "", -1, {}};
}
inline TEntry mk_symlink(std::string name, std::string target) {
  return TEntry{std::move(name), Type::symlink, "", 0777, std::move(target), -1, {}};
}
inline TEntry mk_hardlink(std::string name, std::string target) {
  return TEntry{std::move(name), Type::hardlink, "", 0644, std::move(target), -1, {}};
}
inline TEntry mk_node(std::string name, Type type) {
  return TEntry{std::move(name), type, "", 0644, "", -1, {}};
}
inline TEntry mk_big_file(std::string name, int64_t size) {
  return TEntry{std::move(name), Type::file, "", 0644, "", size, {}};
}

enum class Compression { xz, gzip, none, xz_twice, zstd };

constexpr int64_t k_mtime = 1700000000;

struct WriteDeleter {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

inline void check(struct archive* a, int rc, const char* what) {
  if (rc != ARCHIVE_OK) {
    const char* msg = archive_error_string(a);
    throw std::runtime_error(std::string(what) + ": " + (msg != nullptr ? msg : "?"));
  }
}

// Writes a pax tar of `entries` to `out`, compressed as asked.
inline void write_tar(const fs::path& out, const std::vector<TEntry>& entries,
                      Compression compression = Compression::xz) {
  std::unique_ptr<struct archive, WriteDeleter> a(archive_write_new());
  // pax stores names as UTF-8 text: names that are not UTF-8 need the GNU format (raw bytes).
  const bool raw = std::any_of(entries.begin(), entries.end(), [](const TEntry& t) {
    return !cudnnctl::util::is_valid_utf8(t.name) || !cudnnctl::util::is_valid_utf8(t.link);
  });
  check(a.get(),
        raw ? archive_write_set_format_gnutar(a.get())
            : archive_write_set_format_pax_restricted(a.get()),
        "format");
  if (compression == Compression::xz || compression == Compression::xz_twice) {
    check(a.get(), archive_write_add_filter_xz(a.get()), "xz");
  }
  if (compression == Compression::xz_twice) {
    check(a.get(), archive_write_add_filter_xz(a.get()), "xz");
  }
  if (compression == Compression::gzip) {
    check(a.get(), archive_write_add_filter_gzip(a.get()), "gzip");
  }
  if (compression == Compression::zstd) {
    check(a.get(), archive_write_add_filter_zstd(a.get()), "zstd");
  }
  check(a.get(), archive_write_open_filename(a.get(), out.c_str()), "open");
  for (const auto& t : entries) {
    std::unique_ptr<archive_entry, EntryDeleter> e(archive_entry_new());
    archive_entry_set_pathname(e.get(), t.name.c_str());
    archive_entry_set_mtime(e.get(), k_mtime, 0);
    archive_entry_set_perm(e.get(), static_cast<mode_t>(t.mode));
    int64_t size = 0;
    switch (t.type) {
    case Type::file:
      archive_entry_set_filetype(e.get(), AE_IFREG);
      size = t.size >= 0 ? t.size : static_cast<int64_t>(t.data.size());
      break;
    case Type::dir:
      archive_entry_set_filetype(e.get(), AE_IFDIR);
      break;
    case Type::symlink:
      archive_entry_set_filetype(e.get(), AE_IFLNK);
      archive_entry_set_symlink(e.get(), t.link.c_str());
      break;
    case Type::hardlink:
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_hardlink(e.get(), t.link.c_str());
      break;
    case Type::chr:
      archive_entry_set_filetype(e.get(), AE_IFCHR);
      archive_entry_set_rdev(e.get(), makedev(1, 3));
      break;
    case Type::blk:
      archive_entry_set_filetype(e.get(), AE_IFBLK);
      archive_entry_set_rdev(e.get(), makedev(8, 0));
      break;
    case Type::fifo:
      archive_entry_set_filetype(e.get(), AE_IFIFO);
      break;
    }
    archive_entry_set_size(e.get(), size);
    for (const auto& [offset, length] : t.sparse) {
      archive_entry_sparse_add_entry(e.get(), offset, length);
    }
    check(a.get(), archive_write_header(a.get(), e.get()), "header");
    if (!t.data.empty()) {
      la_ssize_t n = archive_write_data(a.get(), t.data.data(), t.data.size());
      if (n < 0 || static_cast<size_t>(n) != t.data.size()) {
        throw std::runtime_error("archive_write_data");
      }
    }
  }
  check(a.get(), archive_write_close(a.get()), "close");
}

// `data` as one xz stream (libarchive's "raw" format: no container).
inline std::string xz_compress(const std::string& data) {
  std::unique_ptr<struct archive, WriteDeleter> a(archive_write_new());
  check(a.get(), archive_write_set_format_raw(a.get()), "raw format");
  check(a.get(), archive_write_add_filter_xz(a.get()), "xz");
  std::string out(data.size() + (1 << 20), '\0');
  size_t used = 0;
  check(a.get(), archive_write_open_memory(a.get(), out.data(), out.size(), &used), "open");
  std::unique_ptr<archive_entry, EntryDeleter> e(archive_entry_new());
  archive_entry_set_pathname(e.get(), "raw");
  archive_entry_set_filetype(e.get(), AE_IFREG);
  check(a.get(), archive_write_header(a.get(), e.get()), "header");
  if (archive_write_data(a.get(), data.data(), data.size()) !=
      static_cast<la_ssize_t>(data.size())) {
    throw std::runtime_error("archive_write_data");
  }
  check(a.get(), archive_write_close(a.get()), "close");
  out.resize(used);
  return out;
}

inline std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Deterministic incompressible bytes.
inline std::string random_bytes(size_t n, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (auto& c : out) {
    c = static_cast<char>(rng() & 0xff);
  }
  return out;
}

// Serves `bytes` in pieces of min_piece..max_piece bytes; optionally fails after `fail_after`.
class MemorySource : public cudnnctl::archive::ByteSource {
public:
  explicit MemorySource(std::string bytes, size_t min_piece = 1 << 20, size_t max_piece = 1 << 20)
      : m_bytes(std::move(bytes)), m_min(min_piece), m_max(max_piece) {}
  void fail_after(size_t offset, cudnnctl::Error error) {
    m_fail_at = offset;
    m_error = std::move(error);
  }
  [[nodiscard]] cudnnctl::Result<size_t> read(char* buf, size_t capacity) override {
    if (m_pos >= m_fail_at) {
      return std::unexpected(m_error);
    }
    std::uniform_int_distribution<size_t> dist(m_min, m_max);
    size_t n = std::min({dist(m_rng), capacity, m_bytes.size() - m_pos, m_fail_at - m_pos});
    std::copy_n(m_bytes.data() + m_pos, n, buf);
    m_pos += n;
    ++m_calls;
    return n;
  }
  [[nodiscard]] size_t position() const { return m_pos; }
  [[nodiscard]] size_t calls() const { return m_calls; }

private:
  std::string m_bytes;
  size_t m_min;
  size_t m_max;
  size_t m_pos = 0;
  size_t m_calls = 0;
  size_t m_fail_at = SIZE_MAX;
  cudnnctl::Error m_error;
  std::mt19937 m_rng{42};
};

} // namespace archive_test
