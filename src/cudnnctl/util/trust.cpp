// SPDX-License-Identifier: Apache-2.0
#include "util/trust.hpp"

#include <cerrno>
#include <deque>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>
#include <vector>

namespace cudnnctl::util {

namespace {

constexpr int k_max_links = 40;

std::string octal_mode(mode_t mode) {
  static constexpr char k_digits[] = "01234567";
  std::string out(4, '0');
  unsigned m = mode & 07777;
  for (int i = 3; i >= 0; --i) {
    out[static_cast<size_t>(i)] = k_digits[m & 7];
    m >>= 3;
  }
  return out;
}

std::string describe_gid(gid_t gid) {
  struct group gr;
  struct group* found = nullptr;
  std::vector<char> buf(4096);
  if (::getgrgid_r(gid, &gr, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return std::string(found->gr_name) + " (gid " + std::to_string(gid) + ")";
  }
  return "gid " + std::to_string(gid);
}

std::vector<std::string> components(const fs::path& p) {
  std::vector<std::string> out;
  for (const auto& part : p.relative_path()) {
    std::string s = part.string();
    if (!s.empty() && s != ".") {
      out.push_back(std::move(s));
    }
  }
  return out;
}

// One walk: a stack of open directories from "/" down to where the walk stands.
class Walker {
public:
  Walker(std::string what, fs::path target)
      : m_what(std::move(what)), m_target(std::move(target)) {}

  Status open_slash() {
    Fd fd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd) {
      return fail_errno("cannot open /", errno);
    }
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) {
      return fail_errno("cannot examine /", errno);
    }
    TRY(judge(st, "/"));
    m_fds.push_back(std::move(fd));
    return {};
  }

  // From here on, absolute symlink targets and ".." stay at or below the current directory.
  void set_base() { m_base = m_fds.size() - 1; }

  // Walks `todo` front first. Returns false when it stopped at a missing component.
  Result<bool> walk(std::deque<std::string> todo, Missing missing) {
    int created = 0;
    while (!todo.empty()) {
      std::string part = todo.front();
      if (part.empty() || part == ".") {
        todo.pop_front();
        continue;
      }
      if (part == "..") {
        todo.pop_front();
        if (m_fds.size() - 1 > m_base) {
          m_fds.pop_back();
          m_names.pop_back();
        }
        continue;
      }
      const fs::path shown = here() / part;
      struct stat st;
      if (::fstatat(m_fds.back().get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        int err = errno;
        if (err != ENOENT) {
          return fail_errno("cannot examine " + shown.string(), err);
        }
        if (missing == Missing::stop) {
          for (const auto& rest : todo) {
            m_rest /= rest;
          }
          return false;
        }
        if (::mkdirat(m_fds.back().get(), part.c_str(), 0755) != 0) {
          if (errno == EEXIST && ++created < 3) {
            continue; // made by someone else just now: judge what is there
          }
          return fail_errno("cannot create directory " + shown.string(), errno);
        }
        // The new name reaches the disk with its directory (make_dirs does the same); an
        // O_PATH descriptor cannot be fsynced (EBADF), so through a real one.
        Fd parent(::openat(m_fds.back().get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!parent || (::fsync(parent.get()) != 0 && errno != EINVAL)) {
          return fail_errno("fsync " + here().string(), errno);
        }
        continue; // now judge and open it like any existing one
      }
      TRY(judge(st, shown));
      if (S_ISLNK(st.st_mode)) {
        TRY_ASSIGN(fs::path target, link_text(shown, part));
        todo.pop_front();
        if (++m_links > k_max_links) {
          return fail(ErrorCode::environment,
                      refusal(shown, "is one symlink too many (more than 40 on the way)"));
        }
        m_via = shown.string() + " -> " + target.string();
        if (target.is_absolute()) {
          m_fds.resize(m_base + 1);
          m_names.resize(m_base);
        }
        auto parts = components(target);
        todo.insert(todo.begin(), parts.begin(), parts.end());
        continue;
      }
      if (!S_ISDIR(st.st_mode)) {
        return fail(ErrorCode::environment, refusal(shown, "is not a directory"));
      }
      // O_PATH: search permission is all a walk needs (a 0711 directory stays walkable).
      Fd fd(::openat(m_fds.back().get(), part.c_str(),
                     O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!fd) {
        return fail_errno("cannot open " + shown.string(), errno);
      }
      // Judge what was opened, not what the name held a moment before.
      if (::fstat(fd.get(), &st) != 0) {
        return fail_errno("cannot examine " + shown.string(), errno);
      }
      TRY(judge(st, shown));
      m_fds.push_back(std::move(fd));
      m_names.push_back(part);
      todo.pop_front();
      created = 0;
    }
    return true;
  }

  fs::path here() const {
    fs::path p = "/";
    for (const auto& n : m_names) {
      p /= n;
    }
    return p;
  }

  TrustedDir result(bool complete) {
    TrustedDir out;
    out.path = here() / m_rest;
    out.path = out.path.lexically_normal();
    if (out.path.string().size() > 1 && out.path.string().back() == '/') {
      out.path = out.path.parent_path();
    }
    out.fd = std::move(m_fds.back());
    out.complete = complete;
    return out;
  }

  Status judge(const struct stat& st, const fs::path& shown) const {
    std::string why = distrust_reason(st, ::geteuid());
    if (why.empty()) {
      return {};
    }
    return fail(ErrorCode::environment, refusal(shown, why));
  }

  std::string refusal(const fs::path& shown, const std::string& why) const {
    std::string through = m_via.empty() ? "" : " (reached through the symlink " + m_via + ")";
    return "refusing to use " + m_what + " " + m_target.string() + ": " + shown.string() + through +
           " " + why +
           " (a root tool must not act on paths other users can replace: fix its owner or "
           "mode, or choose another path)";
  }

  Result<fs::path> link_text(const fs::path& shown, const std::string& name) const {
    std::vector<char> buf(256);
    while (true) {
      ssize_t n = ::readlinkat(m_fds.back().get(), name.c_str(), buf.data(), buf.size());
      if (n < 0) {
        return fail_errno("readlink " + shown.string(), errno);
      }
      if (static_cast<size_t>(n) < buf.size()) {
        return fs::path(std::string(buf.data(), static_cast<size_t>(n)));
      }
      buf.resize(buf.size() * 2);
    }
  }

private:
  std::string m_what;
  fs::path m_target;
  std::vector<Fd> m_fds;
  std::vector<std::string> m_names; // host components of m_fds[1..]
  size_t m_base = 0;
  int m_links = 0;
  std::string m_via;
  fs::path m_rest; // the missing part, lexically
};

fs::path host_root_of(const fs::path& root) {
  return root.empty() ? fs::path("/") : fs::absolute(root).lexically_normal();
}

// What a plain open() of the host path under_root(root, sys_path) reaches must be what the walk
// inside the root found (`found`: its stat, or nullptr for nothing). They differ when a symlink
// has an absolute target or climbs above the root: the walk takes it inside the root, the
// kernel on the host, so a check of one and a read of the other would trust a file nobody
// checked (issue 34, F5).
Status check_host_agrees(const fs::path& root, const fs::path& sys_path, const struct stat* found,
                         std::string_view what) {
  const fs::path host_root = host_root_of(root);
  if (host_root == "/") {
    return {}; // the walk resolves exactly as the kernel does
  }
  const fs::path host = under_root(host_root, sys_path);
  struct stat st;
  const bool there = ::stat(host.c_str(), &st) == 0;
  if (!there && errno != ENOENT && errno != ENOTDIR && errno != ELOOP) {
    return fail_errno("cannot examine " + host.string(), errno);
  }
  if (!there && !found) {
    return {};
  }
  if (there && found && st.st_dev == found->st_dev && st.st_ino == found->st_ino) {
    return {};
  }
  std::error_code ec;
  fs::path real = there ? fs::canonical(host, ec) : fs::path();
  std::string on_host = !there ? "nothing" : ec ? "a different file" : real.string();
  return fail(ErrorCode::environment,
              "refusing to use " + std::string(what) + " " + host.string() + ": on this host it " +
                  "leads to " + on_host + ", inside the root to " +
                  (found ? "another file" : "nothing") +
                  " (a symlink with an absolute target or one climbing out of the root; make it a "
                  "relative link inside the root, or put the file itself there)");
}

} // namespace

std::string describe_uid(uid_t uid) {
  struct passwd pw;
  struct passwd* found = nullptr;
  std::vector<char> buf(4096);
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return std::string(found->pw_name) + " (uid " + std::to_string(uid) + ")";
  }
  return "uid " + std::to_string(uid);
}

std::string distrust_reason(const struct stat& st, uid_t euid) {
  const bool link = S_ISLNK(st.st_mode);
  if (st.st_uid != 0 && st.st_uid != euid) {
    return std::string(link ? "is a symlink owned by another user ("
                            : "is owned by another user (") +
           describe_uid(st.st_uid) + ")";
  }
  if (link) {
    return {}; // a symlink's own mode means nothing; its target is judged where it leads
  }
  const bool sticky_root = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && st.st_uid == 0;
  if (sticky_root) {
    return {}; // like /tmp: others may add names, but not replace ours
  }
  if (st.st_mode & S_IWOTH) {
    return "is writable by other users (mode " + octal_mode(st.st_mode) + ", owner " +
           describe_uid(st.st_uid) + ")";
  }
  if ((st.st_mode & S_IWGRP) && st.st_gid != 0) {
    return "is writable by other users (mode " + octal_mode(st.st_mode) + ", group " +
           describe_gid(st.st_gid) + ")";
  }
  return {};
}

Result<TrustedDir> walk_trusted(const fs::path& root, const fs::path& sys_path,
                                std::string_view what, Missing missing) {
  const fs::path host_root = host_root_of(root);
  Walker w(std::string(what), under_root(host_root, sys_path));
  TRY(w.open_slash());
  auto root_parts = components(host_root);
  // The root itself is the operator's host path: never created here.
  TRY_ASSIGN(bool root_ok, w.walk({root_parts.begin(), root_parts.end()}, Missing::stop));
  if (!root_ok) {
    return w.result(false);
  }
  w.set_base();
  auto parts = components(sys_path);
  TRY_ASSIGN(bool complete, w.walk({parts.begin(), parts.end()}, missing));
  return w.result(complete);
}

Status check_trusted_children(const TrustedDir& dir, std::string_view what) {
  for (const auto& name : dir_names(dir.path)) {
    struct stat st;
    if (::fstatat(dir.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) {
        continue; // removed meanwhile
      }
      return fail_errno("cannot examine " + (dir.path / name).string(), errno);
    }
    if (std::string why = distrust_reason(st, ::geteuid()); !why.empty()) {
      return fail(ErrorCode::environment,
                  "refusing to use " + std::string(what) + " " + dir.path.string() + ": " +
                      (dir.path / name).string() + " " + why +
                      " (a root tool must not act on paths other users can replace: fix its "
                      "owner or mode)");
    }
  }
  return {};
}

Status check_trusted_file(const fs::path& root, const fs::path& sys_path, std::string_view what) {
  fs::path file = sys_path;
  for (int links = 0;; ++links) {
    TRY_ASSIGN(TrustedDir dir, walk_trusted(root, file.parent_path(), what, Missing::stop));
    if (!dir.complete) {
      return check_host_agrees(root, sys_path, nullptr, what);
    }
    const fs::path shown = dir.path / file.filename();
    struct stat st;
    if (::fstatat(dir.fd.get(), file.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) {
        return check_host_agrees(root, sys_path, nullptr, what);
      }
      return fail_errno("cannot examine " + shown.string(), errno);
    }
    auto refuse = [&](const std::string& why) {
      return fail(ErrorCode::environment,
                  "refusing to use " + std::string(what) + " " +
                      under_root(root.empty() ? fs::path("/") : root, sys_path).string() + ": " +
                      shown.string() + " " + why +
                      " (a root tool must not act on files other users can replace: fix its "
                      "owner or mode)");
    };
    if (std::string why = distrust_reason(st, ::geteuid()); !why.empty()) {
      return refuse(why);
    }
    if (S_ISLNK(st.st_mode)) {
      if (links >= k_max_links) {
        return refuse("is behind more than 40 symlinks");
      }
      std::vector<char> buf(4096);
      ssize_t n = ::readlinkat(dir.fd.get(), file.filename().c_str(), buf.data(), buf.size());
      if (n < 0 || static_cast<size_t>(n) >= buf.size()) {
        return fail_errno("readlink " + shown.string(), n < 0 ? errno : ENAMETOOLONG);
      }
      fs::path target(std::string(buf.data(), static_cast<size_t>(n)));
      // Inside the root, like the walk: an absolute target is a path of the managed system, a
      // relative one starts from the directory the link really is in.
      fs::path sys_dir = "/" / dir.path.lexically_relative(host_root_of(root));
      file = target.is_absolute() ? target : (sys_dir / target);
      file = file.lexically_normal();
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      return refuse("is not a regular file");
    }
    return check_host_agrees(root, sys_path, &st, what);
  }
}

Status check_trusted_dir(const fs::path& root, const fs::path& sys_path, std::string_view what,
                         TrustedDir* out) {
  TRY_ASSIGN(TrustedDir dir, walk_trusted(root, sys_path, what, Missing::stop));
  struct stat st;
  if (dir.complete && ::fstat(dir.fd.get(), &st) != 0) {
    return fail_errno("cannot examine " + dir.path.string(), errno);
  }
  TRY(check_host_agrees(root, sys_path, dir.complete ? &st : nullptr, what));
  if (out) {
    *out = std::move(dir);
  }
  return {};
}

} // namespace cudnnctl::util
