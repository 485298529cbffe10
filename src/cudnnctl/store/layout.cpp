// SPDX-License-Identifier: Apache-2.0
#include "store/layout.hpp"

#include "util/fs.hpp"

namespace cudnnctl::store {

Layout::Layout(fs::path root, fs::path prefix)
    : m_root(root.empty() ? fs::path("/") : root.lexically_normal()),
      m_prefix(prefix.lexically_normal()) {
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
  return util::under_root(m_root, sys_path);
}

} // namespace cudnnctl::store
