// SPDX-License-Identifier: Apache-2.0
// Internal to the manifest module: parsing of one product object of a redistrib manifest
// (both schemas, per platform object, the mixed shape). parse_manifest is the public entry.
#pragma once

#include "manifest/manifest.hpp"
#include "manifest/version.hpp"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::manifest::detail {

// --- Interface ---

struct ProductContext {
  std::string_view key;               // "cudnn", "cudnn_samples", ...: also the path prefix
  Version label;                      // release_label, 3 or 4 components
  std::optional<int> release_major;   // from release_product "cudnn-v8-9-cuda-12" -> 12
  std::vector<std::string>* warnings; // Manifest::warnings
};

// Empty when the product's `version` (parsed: `parsed_version`) fits the release label (4
// components; starts with a 3-component label, equals a 4-component one); otherwise why not,
// e.g. "version \"9.3.0.1\" does not start with release label 9.2.0".
std::string version_problem(const Version& label, const Product& product);

// Parses one product object. Problems of single entries become Product::invalid plus a line
// in *ctx.warnings. Error (ErrorCode::usage, message without the "malformed manifest" prefix)
// only when ctx.key is "cudnn" and its version is missing or fails version_problem.
[[nodiscard]] Result<Product> parse_product(const nlohmann::json& obj, const ProductContext& ctx);

// Checks an untrusted relative_path: relative, plain components only (no "..", ".", empty
// components, backslashes or odd characters), exactly "<product>/<platform>/<file>".
// Returns why it is refused, or nullopt when it is fine.
std::optional<std::string> relative_path_problem(std::string_view path, std::string_view product,
                                                 std::string_view platform);

// The CUDA major an archive file name states: "..._cuda12-archive.tar.xz" -> 12,
// "..._cuda13.4-archive.zip" -> 13; nullopt when it states none ("...-source-...").
std::optional<int> file_name_major(std::string_view relative_path);

// 1 to 3 decimal digits without a leading zero, 1..999 (a CUDA major); nullopt otherwise.
std::optional<int> small_major(std::string_view digits);

} // namespace cudnnctl::manifest::detail
