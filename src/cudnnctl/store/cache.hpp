// SPDX-License-Identifier: Apache-2.0
// The download cache /var/cache/cudnnctl under the root: verified archives named by their
// sha256 (<sha256>.tar.xz, a mirror's repack <sha256>.tar.zst) and resumable partials
// (<sha256>.partial). What is in it, how large, and dropping one archive after an install.
#pragma once

#include "core/result.hpp"
#include "store/layout.hpp"

#include <cstdint>
#include <optional>
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

// The names of the files in the cache now; no cache directory: nullopt. Reads only.
[[nodiscard]] std::optional<std::vector<std::string>> cache_names(const Layout& layout);

// Removes every file in the cache that `before` (cache_names) did not name, and the cache
// directory itself when there was none before and it is empty now; fsyncs. For a refusal that
// must leave the cache as it was (install's late compute-capability refusal, issue 21).
[[nodiscard]] Status drop_new_cached(const Layout& layout,
                                     const std::optional<std::vector<std::string>>& before);

} // namespace cudnnctl::store
