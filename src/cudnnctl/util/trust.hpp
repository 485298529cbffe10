// SPDX-License-Identifier: Apache-2.0
// Ownership walks: may a root tool act on this path? Every component is opened with
// openat(O_NOFOLLOW) from the descriptor of the one before it, so what is judged is what the
// next step uses (no re-resolution of the path string between the check and the use).
// Knows nothing of the application.
#pragma once

#include "core/result.hpp"
#include "util/fs.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <sys/stat.h>

namespace cudnnctl::util {

// --- Interface ---

// What a walk does at the first component that does not exist.
enum class Missing {
  stop,   // stop there: the result is incomplete (what exists was checked)
  create, // create it (mkdirat, mode 0755, parent fsynced) and go on
};

// Where a walk ended.
struct TrustedDir {
  // O_PATH|O_DIRECTORY descriptor of the deepest directory reached: the dirfd for *at()
  // calls; openat(fd, ".", O_RDONLY | O_DIRECTORY) gives one to fsync or list.
  Fd fd;
  fs::path path;         // host path of `fd` with every symlink resolved, then the missing rest
  bool complete = false; // every component exists (or was created)
};

// Why `st` (an lstat of `shown`) may not be trusted by a process with effective uid `euid`:
// owned by someone other than root and `euid` ("owned by another user (nobody, uid 65534)"),
// or, for a directory or file, writable by others or by a group other than root's ("writable by
// other users (mode 0777, owner root)"); a directory that is sticky, world-writable and owned
// by root (/tmp) is accepted, and so is the mode of a symlink (only its owner counts). Empty
// when trusted. Pure: for table tests.
std::string distrust_reason(const struct stat& st, uid_t euid);

// Walks the absolute `sys_path` inside `root` ("/" for a host path) and checks every
// component with distrust_reason(): the directories from "/" down to `root` (the root itself
// is a host path: symlinks on the way are followed as the kernel would), then each component
// of `sys_path` under `root`. A symlink must be owned by root or the effective user; its
// target is walked and judged like any other component, with an absolute target taken inside
// `root` and ".." never climbing above it (so a walk never leaves the root: the way the
// managed system sees it when `root` becomes "/"). At most 40 symlinks.
// Errors (ErrorCode::environment): "refusing to use <what> <sys_path>: <component> is owned by
// another user (...)", "... is writable by other users (...)", "... is not a directory",
// naming the symlink a component was reached through; I/O errors as such.
[[nodiscard]] Result<TrustedDir> walk_trusted(const fs::path& root, const fs::path& sys_path,
                                              std::string_view what,
                                              Missing missing = Missing::stop);

// walk_trusted() for the directory of the file `sys_path`, then the file itself: a regular
// file (a symlink owned by root or us is followed, inside `root`, and its target judged) owned
// by root or the effective user and writable by nobody else. A missing file is fine. What a
// plain open() of the host path reaches must be that same file, or nothing when it is missing
// (see check_trusted_dir()). Errors as for walk_trusted(); a file that is not a regular file:
// ErrorCode::environment.
[[nodiscard]] Status check_trusted_file(const fs::path& root, const fs::path& sys_path,
                                        std::string_view what);

// walk_trusted() of the directory `sys_path` (Missing::stop), and the host path under `root`
// as a plain open() resolves it must reach the same directory (or, like the walk, nothing):
// check_trusted_file() checks the same for a file. A symlink with an absolute target or one
// climbing above the root leads elsewhere on the host than inside it: ErrorCode::environment
// ("refusing to use <what> <path>: on this host it leads to ..., inside the root to ...").
// `out`, when given, gets the walk's result.
[[nodiscard]] Status check_trusted_dir(const fs::path& root, const fs::path& sys_path,
                                       std::string_view what, TrustedDir* out = nullptr);

// Every name directly in the directory `dir` (a complete walk_trusted() result) is judged with
// distrust_reason() (lstat: a symlink by its owner only). For a directory
// whose entries a root tool renames and replaces. Errors as for walk_trusted().
[[nodiscard]] Status check_trusted_children(const TrustedDir& dir, std::string_view what);

// "nobody (uid 65534)", or "uid 12345" when the user database has no name for it.
std::string describe_uid(uid_t uid);

} // namespace cudnnctl::util
