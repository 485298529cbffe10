// SPDX-License-Identifier: Apache-2.0
// Test-only helpers for BackgroundWriter (archive/file_writer): files of varied shapes, fed in
// chunks, and the check of what the writer left on disk. Shared by test_stream_writer.cpp and
// test_stream_writer_sync.cpp.
#pragma once

#include "archive/file_writer.hpp"
#include "archive_test_util.hpp"
#include "core/result.hpp"
#include "util/fs.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace writer_test {

namespace fs = std::filesystem;
using archive_test::random_bytes;
using cudnnctl::Status;
using cudnnctl::archive::BackgroundWriter;
namespace util = cudnnctl::util;

// One file for the writer: data and runs of zeros in order.
struct Part {
  std::string bytes; // data when zeros == 0
  uint64_t zeros = 0;
};

// Files of varied sizes around the slot size: empty, one byte, a slot less or more one, several
// slots, zero runs (sparse) inside and at either end, zeros only.
inline std::vector<std::vector<Part>> varied_files(size_t slot_size, size_t count) {
  std::vector<std::vector<Part>> files;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t seed = 100 + static_cast<uint32_t>(i);
    std::vector<Part> f;
    switch (i % 8) {
    case 0:
      break; // 0 bytes
    case 1:
      f.push_back({random_bytes(1, seed)});
      break;
    case 2:
      f.push_back({random_bytes(slot_size - 1, seed)});
      break;
    case 3:
      f.push_back({random_bytes(slot_size + 1, seed)});
      break;
    case 4: // large: many slots, its hash the slowest (others pass it)
      f.push_back({random_bytes(slot_size * 9 + 123 + i * 31, seed)});
      break;
    case 5: // sparse: data, hole, data, hole at the end
      f.push_back({random_bytes(slot_size / 2 + i, seed)});
      f.push_back({"", slot_size * 3 + 7});
      f.push_back({random_bytes(2 * slot_size + 5, seed + 1)});
      f.push_back({"", 1000});
      break;
    case 6: // zeros only
      f.push_back({"", slot_size * 2 + 11});
      break;
    case 7: // a hole at the start
      f.push_back({"", 77});
      f.push_back({random_bytes(3 * slot_size, seed)});
      break;
    }
    files.push_back(std::move(f));
  }
  return files;
}

inline std::string content_of(const std::vector<Part>& parts) {
  std::string s;
  for (const Part& p : parts) {
    s += p.zeros > 0 ? std::string(static_cast<size_t>(p.zeros), '\0') : p.bytes;
  }
  return s;
}

// The file as the writer left it: its bytes, and the mtime set after its last write.
inline void check_written(const fs::path& p, const std::string& expected, time_t mtime) {
  CHECK(*util::read_file(p) == expected);
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  CHECK(st.st_mtim.tv_sec == mtime);
}

// Feeds one file's parts in chunks of `chunk` bytes.
inline Status feed(BackgroundWriter& w, const std::vector<Part>& parts, size_t chunk) {
  for (const Part& p : parts) {
    if (p.zeros > 0) {
      TRY(w.zeros(p.zeros));
      continue;
    }
    for (size_t at = 0; at < p.bytes.size(); at += chunk) {
      TRY(w.data(p.bytes.data() + at, std::min(chunk, p.bytes.size() - at)));
    }
  }
  return {};
}

// In a fresh directory `dir`: five writers of 6 slots, 3 writer and 4 hash threads, each given
// 24 varied files and destroyed without a drain(): the destructor stops the threads with work
// queued (and, with `sync`, files waiting for their fsync).
inline void write_and_destroy(const std::string& dir, util::Fsync sync) {
  const fs::path base = fs::absolute(dir);
  fs::remove_all(base);
  fs::create_directories(base);
  const auto files = varied_files(4096, 24);
  for (int round = 0; round < 5; ++round) {
    BackgroundWriter w(6, 4096, 3, 4);
    w.sync_files = sync;
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string name = "r" + std::to_string(round) + "-" + std::to_string(i);
      REQUIRE(w.begin(*util::open_fd(base / name, O_WRONLY | O_CREAT | O_EXCL, 0644), name, i));
      REQUIRE(feed(w, files[i], 4096));
      REQUIRE(w.end(std::nullopt));
    }
  }
}

} // namespace writer_test
