// SPDX-License-Identifier: Apache-2.0
// Internal to `mirror`: the repack of one mirrored archive (--repack zstd) and the sidecar
// pins it adds to the pins file.
#pragma once

#include "manifest/pins.hpp"
#include "ops/context.hpp"
#include "ops/mirror.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

// DIR/<repack>.tar.zst and DIR/cudnnctl-repack/<sha256>.json for the archive `a`, already
// verified in place at DIR/<relative_path>. Kept when the sidecar names that archive and the
// repack matches the sidecar; written otherwise (release::write_repack, then the sidecar).
// Under --dry-run only says what it would write. Fills a.repack.
[[nodiscard]] Status place_repack(Context& ctx, const std::filesystem::path& to, MirrorArchive& a,
                                  MirrorResult& out);

// The pins file's sidecar lines: those `old` held, replaced by the repacks placed now.
[[nodiscard]] std::string repack_pin_lines(const manifest::PinSet& old,
                                           const std::vector<MirrorRelease>& done);

} // namespace cudnnctl::ops
