// SPDX-License-Identifier: Apache-2.0
// `install --archive FILE` without a network (issue 19, observation 4): the release named by
// NVIDIA's archive file name, verified against NVIDIA's published manifest data shipped with
// cudnnctl (manifests/releases.json: size and sha256 of every Linux archive) when no mirror
// can vouch for it.
#pragma once

#include "release/resolve.hpp"

#include <optional>
#include <string>

namespace cudnnctl::ops {

// --- Interface ---

// What NVIDIA's archive name says: cudnn-<platform>-<version>_cuda<M>-archive.tar.xz, or a
// site mirror's repack of it (the same name ending in .tar.zst).
struct ArchiveName {
  std::string platform; // "linux-x86_64"
  std::string version;  // "8.9.7.29"
  int cuda = 0;
  bool repack = false; // .tar.zst
};
std::optional<ArchiveName> parse_archive_name(const std::string& path);

// The archive `file` resolved from the shipped data, for VERSION `wanted` and `target`
// (platform, CUDA major: the file name's when not given). `mirrors_said` is why the mirrors
// could not vouch. Not in the shipped data either: `mirrors_said` with a message naming both
// and what to do (--manifest).
[[nodiscard]] Result<release::Resolved> resolve_offline(const std::string& file,
                                                        const manifest::VersionArg& wanted,
                                                        const release::Target& target,
                                                        const Error& mirrors_said);

} // namespace cudnnctl::ops
