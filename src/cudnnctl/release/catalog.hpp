// SPDX-License-Identifier: Apache-2.0
// The releases cudnnctl knows without asking a mirror (manifests/releases.json, compiled in:
// ops/catalog.cpp builds it), and the questions asked of them: which releases have a build
// for a platform and CUDA major, which one a partial VERSION ("9", "9.2", "latest") means,
// what a mistyped VERSION was probably meant to be.
#pragma once

#include "manifest/version.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::release {

// --- Interface ---

struct KnownArchive {
  uint64_t size = 0;
  std::string sha256;
};

struct KnownRelease {
  std::string label;   // "9.2.0", "8.9.7.29"
  std::string version; // "9.2.0.82"
  std::string date;
  bool pinned = false;
  std::map<std::string, std::map<int, KnownArchive>> archives; // Linux platform -> CUDA -> archive
  std::optional<manifest::Version> parsed_label;   // `label` parsed, when it is a version
  std::optional<manifest::Version> parsed_version; // `version` parsed, when it is a version
};

// A release read from a list (label and version parsed here, once); no archives yet.
KnownRelease known_release(std::string label, std::string version, std::string date, bool pinned);

// Ascending by version.
using Catalog = std::vector<KnownRelease>;

// The release whose label is `wanted` or whose version starts with it; nullptr when none.
const KnownRelease* find_known(const Catalog& catalog, const manifest::Version& wanted);

// Labels with a build for `platform` and CUDA `cuda`, ascending.
std::vector<std::string> labels_with_build(const Catalog& catalog, const std::string& platform,
                                           int cuda);

// "9.13.0, 9.14.0, ... 9.27.0": the newest `most` of `labels` (ascending), the rest counted.
std::string newest_of(const std::vector<std::string>& labels, size_t most = 6);

// The minor releases of each major the catalog skips between its first and last of that
// major ("9.11", "9.14 to 9.19"): NVIDIA published them, but their manifests were not among
// those the list was made from. Patch releases it lacks (9.10.1) cannot be seen this way.
std::vector<std::string> minor_gaps(const Catalog& catalog);

// A VERSION that names no single release: "latest", or 1 or 2 components ("9", "9.2").
bool is_partial_version(const manifest::VersionArg& version_arg);

// Whether the release label `label` (parsed; nullopt when it is not a version) is what the
// partial VERSION `version_arg` asks for ("latest": any).
bool partial_matches(const manifest::VersionArg& version_arg,
                     const std::optional<manifest::Version>& label);

// Up to three labels of `labels` closest to `typed` (same major first, then edit distance),
// for "did you mean". Empty when nothing is close.
std::vector<std::string> did_you_mean(const std::string& typed,
                                      const std::vector<std::string>& labels);

// Edit distance (Levenshtein) of two short strings.
size_t edit_distance(const std::string& a, const std::string& b);

} // namespace cudnnctl::release
