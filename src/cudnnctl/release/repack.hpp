// SPDX-License-Identifier: Apache-2.0
// The mirror's one-time repack of an NVIDIA archive: one verified pass over the original
// (sha256 while extracting, install's hostile-entry rules), then a tar in one zstd layer
// written from what was extracted, and the sidecar describing both (release/sidecar.hpp).
#pragma once

#include "core/result.hpp"
#include "manifest/manifest.hpp"
#include "release/sidecar.hpp"

#include <filesystem>

namespace cudnnctl::release {

// --- Interface ---

// zstd level of repacks. zstd decodes at about the same speed at every level, so the level
// only trades the mirror's one-time compression time against the bytes every host downloads;
// level 3 (zstd's default) keeps the decoder's window at 2 MiB (install's peak RSS) and the
// mirror's cost to seconds per GB, where 19 would take many minutes for a few % fewer bytes.
inline constexpr int k_repack_zstd_level = 3;

// Extracts `original` (a local file that must match `pkg`: size and sha256, checked in the
// same pass) into a temporary directory under `work_dir` (removed afterwards), and writes
// DEST (a temporary in `tmp_dir` on DEST's filesystem, fsynced, renamed) as a pax tar of the same
// top folder and entries, in archive order, in one zstd layer of `level` made of independent
// frames of archive::k_repack_frame_bytes each (install decodes them in parallel). Returns the
// sidecar (original, repack, entries). Errors: integrity (the original does not match, hostile
// entries), environment (disk, libarchive without built-in zstd).
[[nodiscard]] Result<Sidecar>
write_repack(const std::filesystem::path& original, const manifest::Package& pkg,
             const std::string& repack_relative_path, const std::filesystem::path& work_dir,
             const std::filesystem::path& tmp_dir, const std::filesystem::path& dest,
             int level = k_repack_zstd_level);

} // namespace cudnnctl::release
