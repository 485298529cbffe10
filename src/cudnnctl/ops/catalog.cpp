// SPDX-License-Identifier: Apache-2.0
#include "ops/catalog.hpp"

#include "doctor/compat.hpp"

namespace cudnnctl::ops {

const release::Catalog& builtin_catalog() {
  static const release::Catalog catalog = [] {
    release::Catalog out;
    for (const auto& row : doctor::builtin_compat().releases) {
      release::KnownRelease r =
          release::known_release(row.label, row.version, row.date, row.pinned);
      for (const auto& [platform, by_cuda] : row.archives) {
        for (const auto& [cuda, a] : by_cuda) {
          r.archives[platform][cuda] = release::KnownArchive{a.size, a.sha256};
        }
      }
      out.push_back(std::move(r));
    }
    return out;
  }();
  return catalog;
}

} // namespace cudnnctl::ops
