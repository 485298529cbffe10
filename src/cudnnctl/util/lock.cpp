// SPDX-License-Identifier: Apache-2.0
#include "util/lock.hpp"

#include "core/signals.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <thread>
#include <unistd.h>

namespace cudnnctl::util {

// The pid that holds a flock on the open file `fd`, from /proc/locks
// ("1: FLOCK  ADVISORY  WRITE <pid> <maj>:<min>:<inode> 0 EOF"); 0 when unknown.
static long flock_holder_pid(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return 0;
  }
  auto locks = read_file("/proc/locks", 16u << 20);
  if (!locks) {
    return 0;
  }
  for (const auto& line : split(*locks, '\n')) {
    char type[16] = {};
    long pid = 0;
    unsigned maj = 0, min = 0;
    unsigned long long ino = 0;
    // A waiter's line starts "1: -> FLOCK": it does not parse and is skipped.
    if (std::sscanf(line.c_str(), "%*s %15s %*s %*s %ld %x:%x:%llu", type, &pid, &maj, &min,
                    &ino) != 5 ||
        std::string_view(type) != "FLOCK") {
      continue;
    }
    if (ino == st.st_ino && maj == major(st.st_dev) && min == minor(st.st_dev)) {
      return pid;
    }
  }
  return 0;
}

// Who holds the lock: the file's content names the last cudnnctl that took it, but any
// process can hold the flock (a `flock` command, a cudnnctl of another version). The
// kernel's view wins when the content names someone else.
static std::string read_holder(int fd) {
  char buf[512];
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s(buf, static_cast<size_t>(std::max<ssize_t>(n, 0)));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) {
    s.pop_back();
  }
  long pid = flock_holder_pid(fd);
  if (pid > 0 && !s.starts_with("pid " + std::to_string(pid) + ":")) {
    // The content was written by the last cudnnctl that took the lock: kept as a hint.
    std::string last = s.empty() ? "" : " (the lock file was last written by: " + s + ")";
    auto cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline", 1 << 16);
    std::string args = cmdline ? *cmdline : std::string();
    std::replace(args.begin(), args.end(), '\0', ' ');
    while (!args.empty() && args.back() == ' ') {
      args.pop_back();
    }
    if (args.size() > 200) {
      args = args.substr(0, 200) + "...";
    }
    if (args.empty() && ::access(("/proc/" + std::to_string(pid)).c_str(), F_OK) != 0) {
      return "a process that inherited the lock from pid " + std::to_string(pid) +
             " (no longer running)" + last;
    }
    return "pid " + std::to_string(pid) + (args.empty() ? "" : " (" + args + ")") + last;
  }
  return s.empty() ? "another cudnnctl process" : s;
}

namespace {
std::function<void(const LockWait&)>& lock_wait_reporter() {
  static std::function<void(const LockWait&)> reporter;
  return reporter;
}
} // namespace

void set_lock_wait_reporter(std::function<void(const LockWait&)> reporter) {
  lock_wait_reporter() = std::move(reporter);
}

std::optional<std::string> LockFile::holder(const fs::path& path) {
  auto fd = open_fd(path, O_RDONLY | O_NOFOLLOW);
  if (!fd || flock_holder_pid(fd->get()) <= 0) {
    return std::nullopt;
  }
  return read_holder(fd->get());
}

Result<LockFile> LockFile::acquire(const fs::path& path, std::chrono::milliseconds timeout,
                                   const std::string& holder) {
  TRY(make_dirs(path.parent_path(), 0755));
  TRY_ASSIGN(Fd fd, open_fd(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0644));
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout;
  // While waiting, an interrupt says that nothing changed (any state change in progress is the
  // holder's).
  struct WaitEnd {
    bool waiting = false;
    ~WaitEnd() {
      if (waiting) {
        core::end_lock_wait();
      }
    }
  } wait_end;
  auto next_report = start;
  constexpr auto k_report_every = std::chrono::seconds(5);
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
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return fail(ErrorCode::busy, "busy: " + read_holder(fd.get()) + " holds " + path.string() +
                                       "; wait for it to finish or raise --lock-timeout");
    }
    if (now >= next_report) {
      LockWait wait{read_holder(fd.get()), path,
                    std::chrono::duration_cast<std::chrono::milliseconds>(now - start), timeout,
                    !wait_end.waiting};
      if (!wait_end.waiting) {
        core::begin_lock_wait(wait.holder);
        wait_end.waiting = true;
      }
      if (lock_wait_reporter()) {
        lock_wait_reporter()(wait);
      }
      next_report = now + k_report_every;
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
