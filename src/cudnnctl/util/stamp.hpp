// SPDX-License-Identifier: Apache-2.0
// File stamps: what lstat/fstat says about a file's identity and last change, used to skip
// hashing a file again when it provably has not changed since it was hashed (git's "racily
// clean" rule). The kernel moves ctime on every write, chmod and rename, and no writer can
// set it back; a stamp is trusted only when the file's ctime was at least `k_settle_ns`
// older than the moment the stamp was taken, so a write in the same clock tick as the hash
// (timestamps are coarse, a few ms) cannot go unnoticed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

namespace cudnnctl::util {

// --- Interface ---

struct FileStamp {
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  int64_t taken_ns = 0; // CLOCK_REALTIME when the stamp was taken; 0: no stamp
  // Same file, same size and times (taken_ns is not compared).
  [[nodiscard]] bool same_file_state(const FileStamp& o) const;
};

inline constexpr int64_t k_settle_ns = 2'000'000'000;

// The stamp of `path` (lstat: a symlink's own) / of an open file; nullopt when stat fails.
[[nodiscard]] std::optional<FileStamp> stamp_of(const std::filesystem::path& path);
[[nodiscard]] std::optional<FileStamp> stamp_of_fd(int fd);

// True when `recorded` may be trusted and `now` shows the same file state: then the bytes
// are the ones hashed when `recorded` was taken.
[[nodiscard]] bool unchanged_since(const FileStamp& recorded, const FileStamp& now);

} // namespace cudnnctl::util
