// SPDX-License-Identifier: Apache-2.0
// <prefix>/lib/pkgconfig/cudnn.pc, rewritten atomically at every switch (removed when no
// generation is active). It names <prefix>/current, the stable path for build systems (the
// loader never sees it: the ld.so drop-in and the CUDA-home links name the store entry).
// Found with PKG_CONFIG_PATH=<prefix>/lib/pkgconfig; under --root add
// PKG_CONFIG_SYSROOT_DIR=<root> so that -I/-L name host paths.
#pragma once

#include "core/result.hpp"
#include "store/entry.hpp"
#include "store/layout.hpp"

#include <filesystem>
#include <string>

namespace cudnnctl::integrate {

// --- Interface ---

// Host path of the pkg-config file.
[[nodiscard]] std::filesystem::path pkgconfig_file(const store::Layout& layout);

// The file's text for `entry` active as generation `generation`. Pure.
[[nodiscard]] std::string render_pkgconfig(const store::Layout& layout,
                                           const store::EntryInfo& entry, int generation);

// Writes it atomically (creating <prefix>/lib/pkgconfig).
[[nodiscard]] Status write_pkgconfig(const store::Layout& layout, const store::EntryInfo& entry,
                                     int generation);

// Removes it (missing is fine).
[[nodiscard]] Status remove_pkgconfig(const store::Layout& layout);

} // namespace cudnnctl::integrate
