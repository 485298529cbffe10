// SPDX-License-Identifier: Apache-2.0
#include "store/cache.hpp"

#include "util/fs.hpp"

#include <algorithm>
#include <cctype>
#include <system_error>

namespace cudnnctl::store {

std::vector<CacheFile> list_cache(const Layout& layout) {
  std::vector<CacheFile> out;
  std::error_code ec;
  for (const auto& de : fs::directory_iterator(layout.cache_dir(), ec)) {
    std::error_code size_ec;
    uint64_t bytes = de.is_regular_file(size_ec) ? de.file_size(size_ec) : 0;
    out.push_back({de.path().filename().string(), size_ec ? 0 : bytes});
  }
  std::sort(out.begin(), out.end(),
            [](const CacheFile& a, const CacheFile& b) { return a.name < b.name; });
  return out;
}

uint64_t cache_bytes(const Layout& layout) {
  uint64_t n = 0;
  for (const auto& f : list_cache(layout)) {
    n += f.bytes;
  }
  return n;
}

Status drop_cached(const Layout& layout, const std::string& sha256) {
  std::string key = sha256;
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  bool removed = false;
  for (const char* suffix : {".tar.xz", ".tar.zst", ".partial"}) {
    fs::path p = layout.cache_dir() / (key + suffix);
    if (util::exists_nofollow(p)) {
      TRY(util::remove_file(p));
      removed = true;
    }
  }
  // The removal outlives a crash, or a rerun finds the file and removes it again.
  return removed ? util::fsync_dir(layout.cache_dir()) : Status{};
}

std::optional<std::vector<std::string>> cache_names(const Layout& layout) {
  if (!util::exists_nofollow(layout.cache_dir())) {
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (const auto& f : list_cache(layout)) {
    names.push_back(f.name);
  }
  return names;
}

Status drop_new_cached(const Layout& layout,
                       const std::optional<std::vector<std::string>>& before) {
  const fs::path dir = layout.cache_dir();
  if (!util::exists_nofollow(dir)) {
    return {};
  }
  bool removed = false;
  for (const auto& f : list_cache(layout)) {
    if (before && std::find(before->begin(), before->end(), f.name) != before->end()) {
      continue;
    }
    TRY(util::remove_tree(dir / f.name));
    removed = true;
  }
  if (!before) {
    std::error_code ec;
    if (fs::is_empty(dir, ec) && !ec && fs::remove(dir, ec) && !ec) {
      return util::fsync_dir(dir.parent_path());
    }
  }
  return removed ? util::fsync_dir(dir) : Status{};
}

} // namespace cudnnctl::store
