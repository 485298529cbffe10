// SPDX-License-Identifier: Apache-2.0
#include "util/state_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::util {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  if (S_ISCHR(mode) || S_ISBLK(mode)) {
    return "a device node";
  }
  if (S_ISLNK(mode)) {
    return "a symlink";
  }
  return "not a regular file";
}

std::unexpected<Error> not_regular(const fs::path& path, mode_t mode) {
  return fail(ErrorCode::environment,
              path.string() + " is " + kind_of(mode) +
                  ", not a regular file (cudnnctl keeps its state there; remove it, then run the "
                  "command again)");
}

} // namespace

Status check_state_file(const fs::path& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return not_regular(path, st.st_mode);
  }
  return {};
}

Result<Fd> open_state_file(const fs::path& path, int flags, mode_t mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    struct stat st;
    // ELOOP: a symlink (O_NOFOLLOW); ENXIO: a FIFO without a reader opened for writing.
    if ((err == ELOOP || err == ENXIO || err == EISDIR) && ::lstat(path.c_str(), &st) == 0 &&
        !S_ISREG(st.st_mode)) {
      return not_regular(path, st.st_mode);
    }
    return fail_errno("cannot open " + path.string(), err);
  }
  Fd out(fd);
  struct stat st;
  if (::fstat(out.get(), &st) != 0) {
    return fail_errno("cannot examine " + path.string(), errno);
  }
  if (!S_ISREG(st.st_mode)) {
    return not_regular(path, st.st_mode);
  }
  int fl = ::fcntl(out.get(), F_GETFL);
  if (fl < 0 || ::fcntl(out.get(), F_SETFL, fl & ~O_NONBLOCK) != 0) {
    return fail_errno("fcntl " + path.string(), errno);
  }
  return out;
}

Result<std::string> read_state_file(const fs::path& path, size_t max_size) {
  TRY_ASSIGN(Fd fd, open_state_file(path, O_RDONLY));
  return read_fd(fd.get(), path, max_size);
}

} // namespace cudnnctl::util
