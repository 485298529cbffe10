// SPDX-License-Identifier: Apache-2.0
// Internal to `mirror`: the repack of one mirrored archive (--repack zstd) and the sidecar
// pins it adds to the pins file.
#pragma once

#include "manifest/pins.hpp"
#include "ops/context.hpp"
#include "ops/mirror.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

// How `mirror` touches the files DIR serves (defined in mirror.cpp, shared with the repack).
namespace mirror_files {
// A regular file DIR serves (never through a symlink, never a FIFO), or nullopt.
std::optional<std::string> read_served(const std::filesystem::path& path, size_t max_size);
// `content` at `path` unless it is there already (temporary in `tmp_dir`, fsync, rename).
[[nodiscard]] Result<bool> write_if_different(const std::filesystem::path& path,
                                              const std::filesystem::path& tmp_dir,
                                              const std::string& content);
// Every directory on the way to `dir` is trusted; missing ones are made.
[[nodiscard]] Status trusted_dirs(const std::filesystem::path& dir);
} // namespace mirror_files

// DIR/<repack>.tar.zst and DIR/cudnnctl-repack/<sha256>.json for the archive `a`, already
// verified in place at DIR/<relative_path>. Kept when the sidecar names that archive and the
// repack matches the sidecar; written otherwise (release::write_repack, then the sidecar).
// Under --dry-run only says what it would write. Fills a.repack.
// Temporaries go to `tmp_dir` (DIR/.cudnnctl/tmp: never served), the extraction tree to
// DIR/.cudnnctl/repack.tmp.* (swept here, under the DIR lock). Under --dry-run only says what
// it would write (`tmp_dir` unused).
[[nodiscard]] Status place_repack(Context& ctx, const std::filesystem::path& to,
                                  const std::filesystem::path& tmp_dir, MirrorArchive& a,
                                  MirrorResult& out);

// The pins file's sidecar lines: those `old` held, replaced by the repacks placed now.
[[nodiscard]] std::string repack_pin_lines(const manifest::PinSet& old,
                                           const std::vector<MirrorRelease>& done);

} // namespace cudnnctl::ops
