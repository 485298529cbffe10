// SPDX-License-Identifier: Apache-2.0
// NVIDIA's redistrib_<label>.json in both real schemas: A (old flat 8.x: platform ->
// package) and B (per CUDA variant: platform -> "cudaNN" -> package), plus the mixed shape
// of redistrib_9.27.0.json (windows-arm64 holds a "cuda13" package AND flat fields).
#pragma once

#include "core/result.hpp"
#include "manifest/version.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::manifest {

// --- Interface ---

struct Package {
  std::string relative_path; // validated: relative, no "..", "<product>/<platform>/<file>"
  std::string sha256;        // 64 lower-case hex digits
  uint64_t size = 0;         // parsed strictly from the decimal string
  std::string md5;           // informational only
};

struct Product {
  std::string name;
  std::string version;                    // 4 components, e.g. "9.2.0.82"
  std::optional<Version> parsed_version;  // `version` parsed, when it is a version
  std::vector<std::string> cuda_variants; // schema B "cuda_variant", e.g. {"11", "12"}
  // platform -> CUDA major -> package. Schema A flat packages are filed under the CUDA
  // major of release_product ("cudnn-v8-9-cuda-12" -> 12) or of the file name ("_cuda12-").
  std::map<std::string, std::map<int, Package>> packages;
  // Entries that could not be understood, by platform key: why (several reasons joined by
  // "; "). Such entries are never in `packages`. Tolerated unless selected. Each one also has
  // a line in Manifest::warnings.
  std::map<std::string, std::string> invalid;
  // The invalid entries whose CUDA major is known: platform -> CUDA major -> why. Lets
  // select_package refuse an invalid selected entry instead of quietly picking another.
  std::map<std::string, std::map<int, std::string>> invalid_variants;
};

struct Manifest {
  std::string release_label;
  Version parsed_label; // release_label parsed
  std::string release_date;
  std::string release_product;
  std::map<std::string, Product> products; // "cudnn", "cudnn_samples", "cudnn_jit", ...
  std::vector<std::string> warnings;       // odd entries outside what was selected
};

// Parses manifest bytes; reads nothing else. `source` names the bytes in messages (a path or
// URL); when its file name is "redistrib_<X>.json", X must equal release_label.
// ErrorCode::usage ("malformed manifest <source>: <why>", one line) for: empty, oversized
// (> 16 MiB) or deeply nested (> 32 levels) input, malformed JSON, duplicate keys, a top level
// that is not an object, a missing, non-string or non-version release_label (3 or 4
// components), no "cudnn" product or one that is not an object, a cudnn "version" that is
// missing, not 4 components, or disagrees with the label (label 9.2.0 -> version 9.2.0.N;
// a 4-component label must equal the version).
// Odd entries elsewhere (a bad size, sha256 or relative_path, an unknown key, the mixed
// shape) become Product::invalid entries and/or Manifest::warnings, never silent drops.
// A flat package beside cudaNN entries (the mixed shape) is filed under the CUDA major of its
// file name ("_cuda13.4-" -> 13) unless that major is taken, else recorded as invalid.
[[nodiscard]] Result<Manifest> parse_manifest(std::string_view bytes, std::string_view source);

// What install downloads: one archive of one product for one platform and CUDA major.
struct Selection {
  std::string label;   // release_label
  std::string version; // the product's 4-component version
  // `version` parsed where the selection is made (the manifest, a store entry, backup.json).
  Result<Version> parsed_version;
  std::string platform; // "linux-x86_64"
  int cuda_major = 0;
  Package package;
};

// Selects the "cudnn" archive for `platform` and `cuda_major`. When `cuda_major` is unset,
// takes the highest CUDA major offered for the platform and appends a warning saying so.
// Unknown platform or variant, or an invalid selected entry: ErrorCode::usage with a message
// that lists what the manifest does offer. A "windows-*" platform or an archive that is not
// ".tar.xz": ErrorCode::usage (cudnnctl installs Linux .tar.xz archives only). Whether the
// platform is one cudnnctl supports (host::is_supported_platform) is the caller's check.
[[nodiscard]] Result<Selection> select_package(const Manifest& manifest, std::string_view platform,
                                               std::optional<int> cuda_major,
                                               std::vector<std::string>& warnings);

} // namespace cudnnctl::manifest
