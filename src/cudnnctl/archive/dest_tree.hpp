// SPDX-License-Identifier: Apache-2.0
// Writes entries under a destination directory through *at() calls relative to a directory
// descriptor of its real path. Intermediate directories are opened one component at a time
// with O_DIRECTORY|O_NOFOLLOW (created 0755 when missing), so nothing is ever created or
// written through a symlink, whatever is already in the tree.
#pragma once

#include "core/result.hpp"
#include "util/fs.hpp"

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <time.h>
#include <vector>

namespace cudnnctl::archive {

// --- Interface ---

class DestTree {
public:
  // Opens the real path of `dest` (an existing directory). Errors: environment.
  [[nodiscard]] static Result<DestTree> open(const std::filesystem::path& dest);

  // Every call takes the entry's path as components relative to the destination (non-empty,
  // already checked by name_problem) and the entry's archive name for messages. Errors:
  // integrity `unsafe archive entry "<name>": ...` when a parent is a symlink or not a
  // directory, or the path already exists (duplicate entry); environment for other failures
  // (ENOSPC, EACCES, EROFS, ...).

  // mkdir 0755; an existing real directory is fine (repeated directory entry).
  [[nodiscard]] Status make_dir(std::span<const std::string> path, std::string_view name);
  // A new file (O_CREAT|O_EXCL|O_NOFOLLOW) with exactly `mode` (umask ignored), open for writing.
  [[nodiscard]] Result<util::Fd> create_file(std::span<const std::string> path, mode_t mode,
                                             std::string_view name);
  // symlinkat(target); `mtime` (may be null) is set on the link itself.
  [[nodiscard]] Status make_symlink(std::span<const std::string> path, const std::string& target,
                                    const timespec* mtime, std::string_view name);
  // linkat(target -> path) without following symlinks; `target` exists (extracted earlier).
  [[nodiscard]] Status make_hardlink(std::span<const std::string> path,
                                     std::span<const std::string> target, std::string_view name);

  [[nodiscard]] const std::filesystem::path& root() const { return m_root_path; }

private:
  DestTree(util::Fd root, std::filesystem::path root_path)
      : m_root(std::move(root)), m_root_path(std::move(root_path)) {}
  enum class Create { no, yes };
  // A new descriptor of the directory `dirs` (components), walked with O_NOFOLLOW.
  [[nodiscard]] Result<util::Fd> walk(std::span<const std::string> dirs, Create create,
                                      std::string_view name);
  // The (cached) descriptor of the parent of `path`, creating missing directories.
  [[nodiscard]] Result<int> parent_of(std::span<const std::string> path, std::string_view name);
  [[nodiscard]] std::string host_path(std::span<const std::string> parts) const;

  util::Fd m_root;
  std::filesystem::path m_root_path;
  // Most entries share their parent with the previous one: keep its descriptor.
  std::vector<std::string> m_cached_dirs;
  util::Fd m_cached;
};

} // namespace cudnnctl::archive
