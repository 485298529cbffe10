// SPDX-License-Identifier: Apache-2.0
// From "install 9.2.0" to one archive: platform, CUDA major, the manifest (fetched from the
// mirrors and checked against its pin, or the operator's --manifest), the selected package
// and the URLs to try for it.
#pragma once

#include "fetch/fetch.hpp"
#include "manifest/manifest.hpp"
#include "manifest/version.hpp"
#include "ops/context.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct Target {
  std::string platform;
  std::optional<int> cuda; // from --cuda, config, or the detected toolkit
  std::string cuda_source; // "--cuda", "config", "CUDA 12.4 at /usr/local/cuda (header)", ""
};

// Platform and CUDA major for this command (no network). A bad --platform: ErrorCode::usage.
[[nodiscard]] Result<Target> resolve_target(Context& ctx);

struct Resolved {
  manifest::Selection selection;
  std::string manifest_source;          // URL or file the manifest came from
  std::vector<std::string> archive_urls; // mirrors in order
};

// Checks that VERSION is a label (3 components) or a full version (4 components).
[[nodiscard]] Result<manifest::Version> parse_version_arg(const std::string& version_arg);

// Fetch options from the context (cacert, progress).
fetch::Options fetch_options(const Context& ctx);

// Resolves VERSION through the manifest. Errors: usage (unknown version/platform/variant,
// malformed manifest), integrity (pin mismatch, unpinned under --require-pin), network.
[[nodiscard]] Result<Resolved> resolve_release(Context& ctx, const std::string& version_arg,
                                               const Target& target);

} // namespace cudnnctl::ops
