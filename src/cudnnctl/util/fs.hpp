// SPDX-License-Identifier: Apache-2.0
// Crash-safe filesystem primitives. Knows nothing of the application.
// Every mutation that must survive power loss is: write a temporary in the same
// directory, fsync it, rename over the target, fsync the directory.
#pragma once

#include "core/result.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace cudnnctl::util {

namespace fs = std::filesystem;

// --- Interface ---

// Move-only owner of a file descriptor (ccache util/fd.hpp).
class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : m_fd(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  ~Fd();

  [[nodiscard]] int get() const { return m_fd; }
  explicit operator bool() const { return m_fd >= 0; }
  // Gives up ownership and returns the descriptor.
  int release();
  // Closes now; returns the error of close(2).
  Status close();

private:
  int m_fd = -1;
};

enum class Fsync { no, yes };

// Opens `path` with open(2) flags | O_CLOEXEC.
[[nodiscard]] Result<Fd> open_fd(const fs::path& path, int flags, mode_t mode = 0644);

// Writes all of `data` to `fd`, retrying on EINTR and short writes.
[[nodiscard]] Status write_all(int fd, const void* data, size_t size, std::string_view what);

// Reads a whole file (at most `max_size` bytes, else a usage error).
[[nodiscard]] Result<std::string> read_file(const fs::path& path, size_t max_size = 64u << 20);

// The rest of the open descriptor `fd` (at most `max_size` bytes, else a usage error naming
// `path`).
[[nodiscard]] Result<std::string> read_fd(int fd, const fs::path& path, size_t max_size);
// One read(2) of at most `size` bytes, again after EINTR; 0 at the end of the file. `path`
// names the file in the error.
[[nodiscard]] Result<size_t> read_some(int fd, char* buf, size_t size, const fs::path& path);

// fsync of a directory through an O_RDONLY|O_DIRECTORY descriptor (O_PATH gives EBADF).
[[nodiscard]] Status fsync_dir(const fs::path& dir);

// A file written under a temporary name in the target's directory (".tmp." infix) and
// renamed over the target by commit(). Without commit() the destructor removes the
// temporary: the target is either the old or the new content, never a mix.
class AtomicFile {
public:
  // Creates the temporary beside `target`.
  [[nodiscard]] static Result<AtomicFile> create(const fs::path& target, mode_t mode = 0644);
  // Creates the temporary in `tmp_dir` (on the target's filesystem), e.g. where a web server
  // serving the target's directory does not look.
  [[nodiscard]] static Result<AtomicFile> create_in(const fs::path& target, const fs::path& tmp_dir,
                                                    mode_t mode = 0644);
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  ~AtomicFile();

  [[nodiscard]] Status write(std::string_view data);
  // fsync(file), close, rename over the target, fsync(dir) when `sync` is yes.
  [[nodiscard]] Status commit(Fsync sync = Fsync::yes);
  [[nodiscard]] int fd() const { return m_fd.get(); }
  [[nodiscard]] const fs::path& temp_path() const { return m_tmp; }

private:
  AtomicFile(fs::path target, fs::path tmp, Fd fd)
      : m_target(std::move(target)), m_tmp(std::move(tmp)), m_fd(std::move(fd)) {}
  fs::path m_target;
  fs::path m_tmp;
  Fd m_fd;
  bool m_committed = false;
};

// Replaces `path` with `content` atomically (AtomicFile), creating parent directories.
[[nodiscard]] Status write_file_atomic(const fs::path& path, std::string_view content,
                                       mode_t mode = 0644, Fsync sync = Fsync::yes);

// Points the symlink `link` at `target` atomically: a temporary link beside it, rename over
// `link`, fsync of the directory. `target` is stored verbatim (callers pass relative targets).
[[nodiscard]] Status replace_symlink(const fs::path& link, const fs::path& target,
                                     Fsync sync = Fsync::yes);

// readlink(2); an error when `link` is missing or not a symlink (ENOENT/EINVAL kept in message).
[[nodiscard]] Result<fs::path> read_link(const fs::path& link);

// lstat-based existence test (does not follow a final symlink).
[[nodiscard]] bool exists_nofollow(const fs::path& path);

// mkdir -p with `mode`; fsyncs the parent of every directory it creates.
[[nodiscard]] Status make_dirs(const fs::path& dir, mode_t mode = 0755);

// fsync every file, then every directory deepest-first, then the tree's parent (nix
// recursiveSync). Symlinks are not followed.
[[nodiscard]] Status sync_tree(const fs::path& root);

// rm -rf that never follows symlinks. Missing `path` is success.
[[nodiscard]] Status remove_tree(const fs::path& path);

// The bytes of the regular files under `path` (the file itself when it is one), never
// following symlinks; what cannot be read counts 0. Missing: 0.
uint64_t tree_bytes(const fs::path& path);

// unlink(2) that treats ENOENT as success.
[[nodiscard]] Status remove_file(const fs::path& path);

// rename(2) + fsync of the destination directory (and the source's if different).
// EXDEV is an error, never a silent copy.
[[nodiscard]] Status rename_durable(const fs::path& from, const fs::path& to);

// The names in directory `dir` (without "." and ".."), sorted; empty when it cannot be read.
std::vector<std::string> dir_names(const fs::path& dir);

// True for names this code creates as temporaries (".tmp." infix).
bool is_tmp_name(std::string_view filename);

// A random lower-case hex string of `bytes` bytes (from getrandom).
std::string random_hex(size_t bytes = 6);

// The path `abs` (an absolute path inside the managed system) under `root`.
fs::path under_root(const fs::path& root, const fs::path& abs);

// Resolves `abs` inside `root` like the kernel would if `root` were "/": symlinks are
// followed, absolute link targets are re-rooted, ".." cannot climb above root. Returns the
// resolved path under root (host path). Missing final components are kept as they are.
[[nodiscard]] Result<fs::path> resolve_in_root(const fs::path& root, const fs::path& abs);

// The path of `p` relative to the directory `base` (lexical; both absolute).
fs::path relative_to(const fs::path& p, const fs::path& base);

} // namespace cudnnctl::util
