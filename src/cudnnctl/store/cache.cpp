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

} // namespace cudnnctl::store
