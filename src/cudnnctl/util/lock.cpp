// SPDX-License-Identifier: Apache-2.0
#include "util/lock.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace cudnnctl::util {

static std::string read_holder(int fd) {
  char buf[512];
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) {
    return "another cudnnctl process";
  }
  std::string s(buf, static_cast<size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) {
    s.pop_back();
  }
  return s.empty() ? "another cudnnctl process" : s;
}

Result<LockFile> LockFile::acquire(const fs::path& path, std::chrono::milliseconds timeout,
                                   const std::string& holder) {
  TRY(make_dirs(path.parent_path(), 0755));
  TRY_ASSIGN(Fd fd, open_fd(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0644));
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) {
      break;
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno != EWOULDBLOCK) {
      return fail_errno("cannot lock " + path.string(), errno);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return fail(ErrorCode::busy, "busy: " + read_holder(fd.get()) + " holds " + path.string() +
                                       "; wait for it to finish or raise --lock-timeout");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Record who holds it, for the "busy" message of the next process. Best effort: the
  // lock itself is the flock, not this content.
  if (::ftruncate(fd.get(), 0) == 0) {
    std::string line = holder + "\n";
    (void)::pwrite(fd.get(), line.data(), line.size(), 0);
  }
  return LockFile(std::move(fd));
}

} // namespace cudnnctl::util
