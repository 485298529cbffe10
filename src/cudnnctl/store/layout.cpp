// SPDX-License-Identifier: Apache-2.0
#include "store/layout.hpp"

#include "util/fs.hpp"

namespace cudnnctl::store {

Layout::Layout(fs::path root, fs::path prefix, OwnDirs dirs)
    : m_root(root.empty() ? fs::path("/") : root.lexically_normal()),
      m_prefix(prefix.lexically_normal()), m_dirs(std::move(dirs)) {
  // "/tmp/r/" and "/tmp/r" are the same root.
  std::string r = m_root.string();
  while (r.size() > 1 && r.back() == '/') {
    r.pop_back();
  }
  m_root = r;
  std::string p = m_prefix.string();
  while (p.size() > 1 && p.back() == '/') {
    p.pop_back();
  }
  m_prefix = p;
}

fs::path Layout::host(const fs::path& sys_path) const {
  if (root_is_slash() || !sys_path.has_filename()) {
    return host_dir(sys_path);
  }
  return host_dir(sys_path.parent_path()) / sys_path.filename();
}

fs::path Layout::host_dir(const fs::path& sys_path) const {
  if (root_is_slash()) {
    return util::under_root(m_root, sys_path); // the kernel resolves the same way
  }
  // A loop of symlinks: the lexical path, and the open that follows reports ELOOP.
  auto resolved = util::resolve_in_root(m_root, sys_path);
  return resolved ? *resolved : util::under_root(m_root, sys_path);
}

} // namespace cudnnctl::store
