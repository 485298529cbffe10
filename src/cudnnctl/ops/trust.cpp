// SPDX-License-Identifier: Apache-2.0
#include "ops/trust.hpp"

#include "store/entry.hpp"
#include "util/trust.hpp"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace cudnnctl::ops {

Status check_root_dir(const std::string& root) {
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) {
    return fail(ErrorCode::usage, "--root " + root + " does not exist (" +
                                      std::string(std::strerror(errno)) +
                                      "): give the directory that stands for / (default /)");
  }
  if (!S_ISDIR(st.st_mode)) {
    return fail(ErrorCode::usage, "--root " + root +
                                      " is not a directory: give the directory that stands for "
                                      "/ (default /)");
  }
  return {};
}

namespace {

// True when `inner` is `outer` or lies inside it (both lexically normal host paths).
bool within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  auto rel = inner.lexically_relative(outer);
  return !rel.empty() && *rel.begin() != "..";
}

bool exists_at(const std::filesystem::path& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

} // namespace

Status check_prefix_placement(const store::Layout& layout, const std::string& shown_as) {
  namespace fs = std::filesystem;
  const fs::path prefix = layout.prefix_dir().lexically_normal();
  const std::string shown =
      shown_as.empty() ? "--prefix " + layout.sys_prefix().string() : shown_as;
  auto refuse = [&](const std::string& why) {
    return fail(ErrorCode::usage,
                shown + " " + why + ": choose a directory of its own (default /opt/cudnn)");
  };
  if (prefix == layout.host_dir("/").lexically_normal()) {
    return refuse("is the root of the system");
  }
  const auto& own = layout.own_dirs();
  for (const fs::path& sys : {own.state, own.cache, own.config}) {
    const fs::path dir = layout.host_dir(sys).lexically_normal();
    if (within(prefix, dir)) {
      return refuse("lies inside " + sys.string() + ", which cudnnctl keeps for itself");
    }
    if (within(dir, prefix)) {
      return refuse("holds " + sys.string() + ", which cudnnctl keeps for itself");
    }
  }
  // Another prefix above this one: a store entry, a generation, or the prefix itself.
  for (fs::path sys = layout.sys_prefix().parent_path(); !sys.empty(); sys = sys.parent_path()) {
    const fs::path host = layout.host_dir(sys);
    if (exists_at(host / store::k_entry_meta)) {
      return refuse("lies inside the store entry " + sys.string() + " of another prefix");
    }
    if (exists_at(host / "store") && exists_at(host / "generations")) {
      return refuse("lies inside the prefix " + sys.string());
    }
    if (sys == sys.root_path()) {
      break;
    }
  }
  return {};
}

} // namespace cudnnctl::ops
