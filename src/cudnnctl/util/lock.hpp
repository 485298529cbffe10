// SPDX-License-Identifier: Apache-2.0
// One exclusive flock per state directory serialises mutating commands.
#pragma once

#include "core/result.hpp"
#include "util/fs.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace cudnnctl::util {

// --- Interface ---

// Holds flock(LOCK_EX) on a lock file that is never unlinked (unlinking would let two
// processes lock two different inodes). Opened O_CLOEXEC so children (ldconfig, the smoke
// helper) never inherit it. Released by the destructor or by process death.
// A wait for the lock as it goes on: `first` once when the lock is found taken, then again
// every few seconds until it is taken or the timeout passes.
struct LockWait {
  std::string holder; // as in the busy message: "pid 1234: cudnnctl install 9.2.0, since ..."
  fs::path path;
  std::chrono::milliseconds waited{0};
  std::chrono::milliseconds timeout{0};
  bool first = true;
};
// Told about every wait of LockFile::acquire in this process (the CLI prints it; none by
// default). Not called when the lock is free or the timeout is 0.
void set_lock_wait_reporter(std::function<void(const LockWait&)> reporter);

class LockFile {
public:
  // Waits up to `timeout` (0 = fail at once). Busy past the timeout: ErrorCode::busy with
  // the holder's description ("pid 1234: cudnnctl install 9.2.0, since ...").
  // `holder` describes this process and is written into the file once locked.
  [[nodiscard]] static Result<LockFile>
  acquire(const fs::path& path, std::chrono::milliseconds timeout, const std::string& holder);
  // Read-only, without locking: who holds the flock on `path` now ("pid 1234: cudnnctl
  // install 9.2.0, since ..."), nullopt when nobody does (or there is no lock file).
  [[nodiscard]] static std::optional<std::string> holder(const fs::path& path);
  LockFile(LockFile&&) noexcept = default;
  LockFile& operator=(LockFile&&) noexcept = default;

private:
  explicit LockFile(Fd fd) : m_fd(std::move(fd)) {}
  Fd m_fd;
};

} // namespace cudnnctl::util
