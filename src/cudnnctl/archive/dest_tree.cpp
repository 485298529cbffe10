// SPDX-License-Identifier: Apache-2.0
#include "archive/dest_tree.hpp"

#include "archive/checks.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::archive {

namespace {

constexpr int k_dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::string duplicate_reason() {
  return "duplicate entry (the path already exists)";
}

} // namespace

Result<DestTree> DestTree::open(const std::filesystem::path& dest) {
  // The real path: a staging directory below a symlinked directory is fine, and everything
  // below it is then reached through descriptors only.
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(dest, ec);
  if (ec) {
    return fail(ErrorCode::environment,
                "cannot resolve the extraction directory " + dest.string() + ": " + ec.message());
  }
  TRY_ASSIGN(util::Fd fd, util::open_fd(real, k_dir_flags));
  return DestTree(std::move(fd), std::move(real));
}

std::string DestTree::host_path(std::span<const std::string> parts) const {
  return (m_root_path / join_components(parts)).string();
}

Result<util::Fd> DestTree::walk(std::span<const std::string> dirs, Create create,
                                std::string_view name) {
  int root = ::fcntl(m_root.get(), F_DUPFD_CLOEXEC, 0);
  if (root < 0) {
    return fail_errno("cannot duplicate a descriptor of " + m_root_path.string(), errno);
  }
  util::Fd current(root);
  for (size_t i = 0; i < dirs.size(); ++i) {
    const char* component = dirs[i].c_str();
    bool created = false;
    int next = ::openat(current.get(), component, k_dir_flags);
    if (next < 0 && errno == ENOENT && create == Create::yes) {
      // Tar archives may omit directory entries: create parents implicitly.
      if (::mkdirat(current.get(), component, 0755) == 0) {
        created = true;
      } else if (errno != EEXIST) {
        return fail_errno("cannot create directory " + host_path(dirs.first(i + 1)), errno);
      }
      next = ::openat(current.get(), component, k_dir_flags);
    }
    if (next < 0) {
      int err = errno;
      std::string prefix = in_quotes(join_components(dirs.first(i + 1)));
      if (err == ELOOP || err == ENOTDIR) {
        // O_NOFOLLOW: a symlink (or a file) where a directory is needed. Writing below it
        // would land wherever it points.
        return unsafe_entry(name, prefix + " is a symlink or not a directory");
      }
      if (err == ENOENT) {
        return unsafe_entry(name, prefix + " does not exist");
      }
      return fail_errno("cannot open directory " + host_path(dirs.first(i + 1)), err);
    }
    current = util::Fd(next);
    // Exactly 0755 whatever the umask.
    if (created && ::fchmod(current.get(), 0755) != 0) {
      return fail_errno("cannot chmod " + host_path(dirs.first(i + 1)), errno);
    }
  }
  return current;
}

Result<int> DestTree::parent_of(std::span<const std::string> path, std::string_view name) {
  auto dirs = path.first(path.size() - 1);
  if (m_cached &&
      std::equal(dirs.begin(), dirs.end(), m_cached_dirs.begin(), m_cached_dirs.end())) {
    return m_cached.get();
  }
  TRY_ASSIGN(util::Fd fd, walk(dirs, Create::yes, name));
  m_cached = std::move(fd);
  m_cached_dirs.assign(dirs.begin(), dirs.end());
  return m_cached.get();
}

Status DestTree::make_dir(std::span<const std::string> path, std::string_view name) {
  TRY_ASSIGN(int parent, parent_of(path, name));
  const char* leaf = path.back().c_str();
  if (::mkdirat(parent, leaf, 0755) == 0) {
    int fd = ::openat(parent, leaf, k_dir_flags);
    if (fd < 0) {
      return fail_errno("cannot open directory " + host_path(path), errno);
    }
    util::Fd dir(fd);
    if (::fchmod(dir.get(), 0755) != 0) {
      return fail_errno("cannot chmod " + host_path(path), errno);
    }
    return {};
  }
  int err = errno;
  if (err == EEXIST) {
    struct stat st;
    if (::fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
      return {}; // a repeated directory entry
    }
    return unsafe_entry(name, "duplicate entry (the path already exists and is not a directory)");
  }
  return fail_errno("cannot create directory " + host_path(path), err);
}

Result<util::Fd> DestTree::create_file(std::span<const std::string> path, mode_t mode,
                                       std::string_view name) {
  TRY_ASSIGN(int parent, parent_of(path, name));
  int fd;
  do {
    // O_EXCL: never reuse or truncate an existing file; O_NOFOLLOW: never write through a
    // symlink at the final component.
    fd = ::openat(parent, path.back().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (errno == EEXIST) {
      return unsafe_entry(name, duplicate_reason());
    }
    return fail_errno("cannot create " + host_path(path), errno);
  }
  util::Fd file(fd);
  if (::fchmod(file.get(), mode) != 0) {
    return fail_errno("cannot chmod " + host_path(path), errno);
  }
  return file;
}

Status DestTree::make_symlink(std::span<const std::string> path, const std::string& target,
                              const timespec* mtime, std::string_view name) {
  TRY_ASSIGN(int parent, parent_of(path, name));
  const char* leaf = path.back().c_str();
  if (::symlinkat(target.c_str(), parent, leaf) != 0) {
    if (errno == EEXIST) {
      return unsafe_entry(name, duplicate_reason());
    }
    return fail_errno("cannot create symlink " + host_path(path), errno);
  }
  if (mtime != nullptr) {
    const timespec times[2] = {{0, UTIME_OMIT}, *mtime};
    if (::utimensat(parent, leaf, times, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail_errno("cannot set the time of " + host_path(path), errno);
    }
  }
  return {};
}

Status DestTree::make_hardlink(std::span<const std::string> path,
                               std::span<const std::string> target, std::string_view name) {
  TRY_ASSIGN(util::Fd target_dir, walk(target.first(target.size() - 1), Create::no, name));
  TRY_ASSIGN(int parent, parent_of(path, name));
  // Flags 0: a symlink named as the target is linked itself, never followed.
  if (::linkat(target_dir.get(), target.back().c_str(), parent, path.back().c_str(), 0) != 0) {
    if (errno == EEXIST) {
      return unsafe_entry(name, duplicate_reason());
    }
    if (errno == ENOENT) {
      return unsafe_entry(name, "hard link target " + in_quotes(join_components(target)) +
                                    " does not exist");
    }
    return fail_errno("cannot create hard link " + host_path(path), errno);
  }
  return {};
}

} // namespace cudnnctl::archive
