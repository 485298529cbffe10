// SPDX-License-Identifier: Apache-2.0
// Opening the files a program keeps its own state in (and lock-free reads of them): a FIFO or
// a device planted at such a path must give an error, never a hang, and a symlink there is not
// followed. Knows nothing of the application.
#pragma once

#include "core/result.hpp"
#include "util/fs.hpp"

#include <filesystem>
#include <string>

namespace cudnnctl::util {

// --- Interface ---

// open(2) of `path` with `flags` | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, then fstat: anything
// but a regular file is closed again and refused (ErrorCode::environment: "<path> is a FIFO,
// not a regular file (remove it ...)"); a symlink at `path` likewise ("is a symlink"). Opening
// a FIFO this way never blocks: a reader returns at once, a writer without a reader gets ENXIO
// (reported the same way). O_NONBLOCK is cleared again on the returned descriptor. Other
// errors (ENOENT included) as for open_fd().
[[nodiscard]] Result<Fd> open_state_file(const fs::path& path, int flags, mode_t mode = 0644);
// The same error as open_state_file's when `path` exists and is not a regular file (a FIFO,
// a directory, a link): a mutating command checks its history with it before it changes
// anything. A missing file is fine.
[[nodiscard]] Status check_state_file(const fs::path& path);

// read_file() through open_state_file(): at most `max_size` bytes (else ErrorCode::usage).
[[nodiscard]] Result<std::string> read_state_file(const fs::path& path,
                                                  size_t max_size = 64u << 20);

} // namespace cudnnctl::util
