// SPDX-License-Identifier: Apache-2.0
#include "util/stamp.hpp"

#include <sys/stat.h>
#include <time.h>

namespace cudnnctl::util {

namespace {

int64_t ns(const timespec& t) {
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

FileStamp from_stat(const struct stat& st) {
  FileStamp s;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = ns(st.st_mtim);
  s.ctime_ns = ns(st.st_ctim);
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  s.taken_ns = ns(now);
  return s;
}

} // namespace

bool FileStamp::same_file_state(const FileStamp& o) const {
  return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns &&
         ctime_ns == o.ctime_ns;
}

std::optional<FileStamp> stamp_of(const std::filesystem::path& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return std::nullopt;
  }
  return from_stat(st);
}

std::optional<FileStamp> stamp_of_fd(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return std::nullopt;
  }
  return from_stat(st);
}

bool unchanged_since(const FileStamp& recorded, const FileStamp& now) {
  return recorded.taken_ns != 0 && recorded.ctime_ns <= recorded.taken_ns - k_settle_ns &&
         recorded.same_file_state(now);
}

} // namespace cudnnctl::util
