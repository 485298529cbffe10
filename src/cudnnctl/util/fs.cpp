// SPDX-License-Identifier: Apache-2.0
#include "util/fs.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cudnnctl::util {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = other.release();
  }
  return *this;
}

Fd::~Fd() {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

int Fd::release() {
  int fd = m_fd;
  m_fd = -1;
  return fd;
}

Status Fd::close() {
  int fd = release();
  if (fd >= 0 && ::close(fd) != 0 && errno != EINTR) {
    return fail_errno("close", errno);
  }
  return {};
}

Result<Fd> open_fd(const fs::path& path, int flags, mode_t mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    return fail_errno("cannot open " + path.string(), errno);
  }
  return Fd(fd);
}

Status write_all(int fd, const void* data, size_t size, std::string_view what) {
  auto p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail_errno(std::string("cannot write ") + std::string(what), errno);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return {};
}

Result<std::string> read_file(const fs::path& path, size_t max_size) {
  TRY_ASSIGN(Fd fd, open_fd(path, O_RDONLY));
  return read_fd(fd.get(), path, max_size);
}

Result<size_t> read_some(int fd, char* buf, size_t size, const fs::path& path) {
  while (true) {
    ssize_t n = ::read(fd, buf, size);
    if (n >= 0) {
      return static_cast<size_t>(n);
    }
    if (errno != EINTR) {
      return fail_errno("cannot read " + path.string(), errno);
    }
  }
}

Result<std::string> read_fd(int fd, const fs::path& path, size_t max_size) {
  std::string out;
  char buf[65536];
  while (true) {
    TRY_ASSIGN(size_t n, read_some(fd, buf, sizeof buf, path));
    if (n == 0) {
      break;
    }
    out.append(buf, n);
    if (out.size() > max_size) {
      return fail(ErrorCode::usage,
                  path.string() + " is larger than " + std::to_string(max_size) + " bytes");
    }
  }
  return out;
}

Status fsync_dir(const fs::path& dir) {
  TRY_ASSIGN(Fd fd, open_fd(dir.empty() ? fs::path(".") : dir, O_RDONLY | O_DIRECTORY));
  if (::fsync(fd.get()) != 0 && errno != EINVAL) {
    // EIO from fsync is final: never retry and carry on.
    return fail_errno("fsync " + dir.string(), errno);
  }
  return {};
}

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      // getrandom cannot fail on Linux >= 3.17 with flags 0 except EINTR; mix in pid/time.
      for (size_t i = got; i < bytes; ++i) {
        raw[i] = static_cast<unsigned char>((::getpid() * 31 + ::time(nullptr) + i * 7) & 0xff);
      }
      break;
    }
    got += static_cast<size_t>(n);
  }
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::vector<std::string> dir_names(const fs::path& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    return out;
  }
  while (auto* de = ::readdir(d)) {
    std::string n = de->d_name;
    if (n != "." && n != "..") {
      out.push_back(std::move(n));
    }
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool is_tmp_name(std::string_view filename) {
  return filename.find(".tmp.") != std::string_view::npos;
}

static fs::path temp_in(const fs::path& dir, const fs::path& target) {
  return dir / ("." + target.filename().string() + ".tmp." + random_hex());
}

static fs::path temp_sibling(const fs::path& target) {
  return temp_in(target.parent_path(), target);
}

Result<AtomicFile> AtomicFile::create(const fs::path& target, mode_t mode) {
  return create_in(target, target.parent_path(), mode);
}

Result<AtomicFile> AtomicFile::create_in(const fs::path& target, const fs::path& tmp_dir,
                                         mode_t mode) {
  fs::path tmp = temp_in(tmp_dir, target);
  TRY_ASSIGN(Fd fd, open_fd(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode));
  // open(2) applies the umask; make the mode exact.
  if (::fchmod(fd.get(), mode) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return fail_errno("chmod " + tmp.string(), err);
  }
  return AtomicFile(target, tmp, std::move(fd));
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : m_target(std::move(other.m_target)), m_tmp(std::move(other.m_tmp)),
      m_fd(std::move(other.m_fd)), m_committed(other.m_committed) {
  other.m_committed = true; // the moved-from object owns nothing
}

AtomicFile::~AtomicFile() {
  if (!m_committed) {
    m_fd = Fd();
    ::unlink(m_tmp.c_str());
  }
}

Status AtomicFile::write(std::string_view data) {
  return write_all(m_fd.get(), data.data(), data.size(), m_tmp.string());
}

Status AtomicFile::commit(Fsync sync) {
  if (sync == Fsync::yes && ::fsync(m_fd.get()) != 0) {
    return fail_errno("fsync " + m_tmp.string(), errno);
  }
  TRY(m_fd.close());
  if (::rename(m_tmp.c_str(), m_target.c_str()) != 0) {
    return fail_errno("rename " + m_tmp.string() + " to " + m_target.string(), errno);
  }
  m_committed = true;
  if (sync == Fsync::yes) {
    TRY(fsync_dir(m_target.parent_path()));
  }
  return {};
}

Status write_file_atomic(const fs::path& path, std::string_view content, mode_t mode, Fsync sync) {
  TRY(make_dirs(path.parent_path()));
  TRY_ASSIGN(AtomicFile file, AtomicFile::create(path, mode));
  TRY(file.write(content));
  return file.commit(sync);
}

Status replace_symlink(const fs::path& link, const fs::path& target, Fsync sync) {
  for (int attempt = 0;; ++attempt) {
    fs::path tmp = temp_sibling(link);
    if (::symlink(target.c_str(), tmp.c_str()) != 0) {
      if (errno == EEXIST && attempt < 10) {
        continue;
      }
      return fail_errno("cannot create symlink " + tmp.string(), errno);
    }
    if (::rename(tmp.c_str(), link.c_str()) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      return fail_errno("cannot rename " + tmp.string() + " to " + link.string(), err);
    }
    break;
  }
  if (sync == Fsync::yes) {
    TRY(fsync_dir(link.parent_path()));
  }
  return {};
}

Result<fs::path> read_link(const fs::path& link) {
  std::vector<char> buf(256);
  while (true) {
    ssize_t n = ::readlink(link.c_str(), buf.data(), buf.size());
    if (n < 0) {
      return fail_errno("readlink " + link.string(), errno);
    }
    if (static_cast<size_t>(n) < buf.size()) {
      return fs::path(std::string(buf.data(), static_cast<size_t>(n)));
    }
    buf.resize(buf.size() * 2);
  }
}

bool exists_nofollow(const fs::path& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

Status make_dirs(const fs::path& dir, mode_t mode) {
  if (dir.empty()) {
    return {};
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return fail(ErrorCode::environment, dir.string() + " exists and is not a directory");
    }
    return {};
  }
  if (dir.has_parent_path() && dir.parent_path() != dir) {
    TRY(make_dirs(dir.parent_path(), mode));
  }
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) {
    return fail_errno("cannot create directory " + dir.string(), errno);
  }
  return fsync_dir(dir.parent_path());
}

namespace {

// Walks `dirfd` (already open) and fsyncs files then the directory itself.
Status sync_dir_recursive(int dirfd, const std::string& shown) {
  int dupfd = ::dup(dirfd);
  if (dupfd < 0) {
    return fail_errno("dup", errno);
  }
  DIR* d = ::fdopendir(dupfd);
  if (!d) {
    int err = errno;
    ::close(dupfd);
    return fail_errno("opendir " + shown, err);
  }
  Status status;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") {
      continue;
    }
    struct stat st;
    if (::fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      status = fail_errno("stat " + shown + "/" + e->d_name, errno);
      break;
    }
    if (S_ISLNK(st.st_mode)) {
      continue; // the link itself is made durable by its directory's fsync
    }
    int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0);
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
      continue;
    }
    Fd child(::openat(dirfd, e->d_name, flags));
    if (!child) {
      status = fail_errno("open " + shown + "/" + e->d_name, errno);
      break;
    }
    if (S_ISDIR(st.st_mode)) {
      status = sync_dir_recursive(child.get(), shown + "/" + e->d_name);
      if (!status) {
        break;
      }
    } else if (::fsync(child.get()) != 0) {
      status = fail_errno("fsync " + shown + "/" + e->d_name, errno);
      break;
    }
  }
  ::closedir(d);
  if (!status) {
    return status;
  }
  if (::fsync(dirfd) != 0 && errno != EINVAL) {
    return fail_errno("fsync " + shown, errno);
  }
  return {};
}

Status remove_recursive_at(int parentfd, const char* name, const std::string& shown) {
  struct stat st;
  if (::fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) {
      return {};
    }
    return fail_errno("stat " + shown, errno);
  }
  if (S_ISDIR(st.st_mode)) {
    Fd dfd(::openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dfd) {
      return fail_errno("open " + shown, errno);
    }
    // Make sure we can delete entries even from a read-only (0555) directory we own.
    if ((st.st_mode & S_IWUSR) == 0) {
      ::fchmod(dfd.get(), st.st_mode | S_IWUSR | S_IXUSR);
    }
    int dupfd = ::dup(dfd.get());
    DIR* d = dupfd >= 0 ? ::fdopendir(dupfd) : nullptr;
    if (!d) {
      int err = errno;
      if (dupfd >= 0) {
        ::close(dupfd);
      }
      return fail_errno("opendir " + shown, err);
    }
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
      std::string_view n = e->d_name;
      if (n != "." && n != "..") {
        names.emplace_back(n);
      }
    }
    ::closedir(d);
    for (const auto& n : names) {
      TRY(remove_recursive_at(dfd.get(), n.c_str(), shown + "/" + n));
    }
    if (::unlinkat(parentfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
      return fail_errno("rmdir " + shown, errno);
    }
    return {};
  }
  if (::unlinkat(parentfd, name, 0) != 0 && errno != ENOENT) {
    return fail_errno("unlink " + shown, errno);
  }
  return {};
}

} // namespace

Status sync_tree(const fs::path& root) {
  TRY_ASSIGN(Fd fd, open_fd(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
  TRY(sync_dir_recursive(fd.get(), root.string()));
  if (root.has_parent_path()) {
    TRY(fsync_dir(root.parent_path()));
  }
  return {};
}

Status remove_tree(const fs::path& path) {
  fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  Fd pfd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!pfd) {
    if (errno == ENOENT) {
      return {};
    }
    return fail_errno("open " + parent.string(), errno);
  }
  return remove_recursive_at(pfd.get(), path.filename().c_str(), path.string());
}

uint64_t tree_bytes(const fs::path& path) {
  std::error_code ec;
  auto st = fs::symlink_status(path, ec);
  if (ec) {
    return 0;
  }
  if (fs::is_regular_file(st)) {
    auto n = fs::file_size(path, ec);
    return ec ? 0 : n;
  }
  uint64_t total = 0;
  if (!fs::is_directory(st)) {
    return total;
  }
  for (auto it = fs::recursive_directory_iterator(path, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code fec;
    if (it->is_regular_file(fec) && !it->is_symlink(fec)) {
      auto n = it->file_size(fec);
      total += fec ? 0 : n;
    }
  }
  return total;
}

Status remove_file(const fs::path& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return fail_errno("cannot remove " + path.string(), errno);
  }
  return {};
}

Status rename_durable(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    int err = errno;
    if (err == EXDEV) {
      return fail(ErrorCode::environment, "cannot rename " + from.string() + " to " + to.string() +
                                              ": different filesystems (staging must live on "
                                              "the store's filesystem)");
    }
    return fail_errno("cannot rename " + from.string() + " to " + to.string(), err);
  }
  TRY(fsync_dir(to.parent_path()));
  if (from.parent_path() != to.parent_path()) {
    TRY(fsync_dir(from.parent_path()));
  }
  return {};
}

fs::path under_root(const fs::path& root, const fs::path& abs) {
  fs::path rel = abs.relative_path();
  if (root.empty() || root == "/") {
    return fs::path("/") / rel;
  }
  return root / rel;
}

Result<fs::path> resolve_in_root(const fs::path& root, const fs::path& abs) {
  // Components still to walk, front first.
  std::vector<std::string> todo;
  for (const auto& part : abs.relative_path()) {
    todo.push_back(part.string());
  }
  std::reverse(todo.begin(), todo.end());
  std::vector<std::string> done; // resolved components under root
  int links = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.back());
    todo.pop_back();
    if (part.empty() || part == ".") {
      continue;
    }
    if (part == "..") {
      if (!done.empty()) {
        done.pop_back();
      }
      continue;
    }
    fs::path current = root.empty() ? fs::path("/") : root;
    for (const auto& d : done) {
      current /= d;
    }
    current /= part;
    struct stat st;
    if (::lstat(current.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      if (++links > 40) {
        return fail(ErrorCode::environment, "too many levels of symbolic links in " + abs.string());
      }
      TRY_ASSIGN(fs::path target, read_link(current));
      if (target.is_absolute()) {
        done.clear();
      }
      std::vector<std::string> parts;
      for (const auto& p : target.relative_path()) {
        parts.push_back(p.string());
      }
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        todo.push_back(*it);
      }
      continue;
    }
    done.push_back(part);
  }
  fs::path out = root.empty() ? fs::path("/") : root;
  for (const auto& d : done) {
    out /= d;
  }
  return out;
}

fs::path relative_to(const fs::path& p, const fs::path& base) {
  return p.lexically_relative(base);
}

} // namespace cudnnctl::util
