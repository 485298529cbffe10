// SPDX-License-Identifier: Apache-2.0
// The download cache /var/cache/cudnnctl under the root: verified archives named by their
// sha256 (<sha256>.tar.xz, a mirror's repack <sha256>.tar.zst) and resumable partials
// (<sha256>.partial). What is in it, how large, and dropping one archive after an install.
#pragma once

#include "store/layout.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cudnnctl::store {

// --- Interface ---

struct CacheFile {
  std::string name; // file name in the cache directory
  uint64_t bytes = 0;
};

// The files in the cache, sorted by name; no cache directory: none. Reads only.
std::vector<CacheFile> list_cache(const Layout& layout);

// Their total size in bytes.
uint64_t cache_bytes(const Layout& layout);

// Removes the cached archive and partial of `sha256` (any case; every suffix) and fsyncs the
// cache directory; what is not there is fine. Disk errors: ErrorCode::environment.
[[nodiscard]] Status drop_cached(const Layout& layout, const std::string& sha256);

} // namespace cudnnctl::store
