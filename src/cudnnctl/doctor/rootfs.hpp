// SPDX-License-Identifier: Apache-2.0
// Read-only access to the system under --root by its own (system) paths: symlinks are
// resolved inside the root (absolute targets re-rooted), never on the host. Nothing here
// writes, creates or locks anything.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <vector>

namespace cudnnctl::doctor {

namespace fs = std::filesystem;

// --- Interface ---

class RootFs {
public:
  explicit RootFs(fs::path root);

  [[nodiscard]] const fs::path& root() const { return m_root; }
  [[nodiscard]] bool is_slash() const { return m_root == "/"; }

  // Host path of the system path `sys` with every symlink resolved inside the root (the
  // lexical host path when resolution fails, e.g. a link loop).
  [[nodiscard]] fs::path real(const fs::path& sys) const;
  // The system path `sys` resolves to (symlinks resolved inside the root).
  [[nodiscard]] fs::path real_sys(const fs::path& sys) const;
  // Host path of `sys` whose parent directory is resolved but whose last component is not
  // (what lstat/readlink need).
  [[nodiscard]] fs::path host_nofollow(const fs::path& sys) const;
  // System path of a host path under the root ("/" for the root itself).
  [[nodiscard]] fs::path to_sys(const fs::path& host) const;

  // stat/lstat of `sys`; false when it does not exist.
  [[nodiscard]] bool stat(const fs::path& sys, struct ::stat& st) const;
  [[nodiscard]] bool lstat(const fs::path& sys, struct ::stat& st) const;
  [[nodiscard]] bool is_dir(const fs::path& sys) const;
  [[nodiscard]] bool is_file(const fs::path& sys) const; // a regular file, links followed
  [[nodiscard]] bool exists(const fs::path& sys) const;  // links followed
  [[nodiscard]] bool is_symlink(const fs::path& sys) const;
  [[nodiscard]] std::optional<std::string> readlink(const fs::path& sys) const;

  // Whole file (links followed), nullopt when missing, unreadable or larger than `max`.
  [[nodiscard]] std::optional<std::string> read(const fs::path& sys, size_t max = 4u << 20) const;
  // Sorted entry names of a directory (links followed); empty when unreadable.
  [[nodiscard]] std::vector<std::string> list(const fs::path& sys_dir) const;
  // Sorted system paths matching `pattern` (absolute; '*', '?' and '[...]' in any component,
  // as glob(3) with fnmatch rules; names starting with '.' only match a pattern that does).
  [[nodiscard]] std::vector<fs::path> glob(std::string_view pattern) const;

private:
  fs::path m_root;
};

// "/a/b/../c/" -> "/a/c" (lexical, no trailing slash).
fs::path clean(const fs::path& p);

} // namespace cudnnctl::doctor
