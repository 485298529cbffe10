// SPDX-License-Identifier: Apache-2.0
// From "install 9.2.0" to one archive: platform, CUDA major, the manifest (fetched from the
// mirrors and checked against its pin, or the operator's --manifest), the selected package
// and the URLs to try for it.
#pragma once

#include "fetch/fetch.hpp"
#include "manifest/manifest.hpp"
#include "manifest/pins.hpp"
#include "manifest/version.hpp"
#include "release/catalog.hpp"
#include "store/config.hpp"
#include "store/layout.hpp"
#include "util/notes.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::release {

// --- Interface ---

// Where releases come from and how far they are trusted (flags over config).
struct Sources {
  std::vector<std::string> mirrors;    // in order
  std::optional<std::string> manifest; // --manifest FILE|URL
  bool require_pin = false;
  std::optional<std::string> cacert;
  std::filesystem::path pins_dir;   // <root>/etc/cudnnctl/pins.d
  const Catalog* catalog = nullptr; // the releases cudnnctl knows (ops/catalog.hpp)
};

struct Target {
  std::string platform;
  std::optional<int> cuda;    // from --cuda, config, or the detected toolkit
  std::string cuda_source;    // "--cuda", "config", "CUDA 12.4 at /usr/local/cuda (header)", ""
  std::optional<int> toolkit; // the CUDA toolkit's major under the root, also with --cuda
  std::string toolkit_source; // "CUDA 13.0 at /usr/local/cuda (header)"
  bool force = false;         // --force: a requirement refusal (exit 7) becomes a warning
  // The active build's CUDA major and label ("9.1.0"), used when nothing above decides
  // (no --cuda, no config, no toolkit under the root) and the release has a build for it.
  std::optional<int> active_cuda;
  std::string active_label;
};

// Platform and CUDA major for this command (no network): the flags, else the config, else
// this machine and the CUDA toolkit under the root. A bad platform: ErrorCode::usage.
[[nodiscard]] Result<Target> resolve_target(const store::Layout& layout,
                                            const store::Config& config,
                                            const std::optional<std::string>& platform_flag,
                                            std::optional<int> cuda_flag);

struct Resolved {
  manifest::Selection selection;
  std::string manifest_source;           // URL or file the manifest came from
  std::vector<std::string> archive_urls; // mirrors in order
  std::vector<std::string> bases;        // the mirror base URLs behind archive_urls, in order
};

// Checks that VERSION is a label (3 components) or a full version (4 components).
[[nodiscard]] Result<manifest::Version> parse_version_arg(const manifest::VersionArg& version_arg);

// Fetch options for `sources` (cacert, the test knob for stalled mirrors).
fetch::Options fetch_options(const Sources& sources);

// Largest manifest accepted (real ones are under 16 KiB).
inline constexpr size_t k_max_manifest = 4u << 20;

// The pin check every fetched manifest passes before it is used: a mismatch, or an unpinned
// manifest under --require-pin, is ErrorCode::integrity; malformed is ErrorCode::usage.
[[nodiscard]] Status check_manifest_pin(const Sources& sources, const manifest::PinSet& pins,
                                        const std::string& body, const std::string& url);

// The manifest file names for VERSION: redistrib_<VERSION>.json and, for a 4-component
// version, the 3-component label (9.x publishes only those).
std::vector<std::string> manifest_names(const manifest::Version& wanted);

// Fetches the first of `names` that a base serves and that passes check_manifest_pin. Every
// name 404 on every base: ErrorCode::mirror_not_found (exit 3) naming the URLs when
// cudnnctl knows the release (catalog or pins), else ErrorCode::unknown_version with
// did-you-mean suggestions. A mirror answering HTML: ErrorCode::mirror_not_manifest.
[[nodiscard]] Result<fetch::Fetched> fetch_manifest(const Sources& sources, util::Notes& notes,
                                                    const std::vector<std::string>& bases,
                                                    const std::vector<std::string>& names,
                                                    const manifest::VersionArg& version_arg,
                                                    const manifest::PinSet& pins);

// The manifest describes the release that was asked for (label or version prefix), else
// ErrorCode::usage.
[[nodiscard]] Status check_manifest_matches(const manifest::Manifest& m,
                                            const manifest::Version& wanted,
                                            const std::string& source);

// The refusal when release `m` has no build for the CUDA major this host needs: the one
// asked for (--cuda, config, else the toolkit's), or, without --force, the toolkit's when
// --cuda asks for another. ErrorCode::no_cuda_build (exit 7) listing the ways out: the
// releases with such a build, this release's other builds with --cuda N --force, another
// toolkit. nullopt when the release has that build (or no build for the platform at all:
// select_package says so).
std::optional<Error> no_cuda_build(const manifest::Manifest& m, const Target& target,
                                   const Catalog* catalog);

// Resolves VERSION through the manifest. Errors: usage (unknown version/platform/variant,
// malformed manifest), integrity (pin mismatch, unpinned under --require-pin), network.
[[nodiscard]] Result<Resolved> resolve_release(const Sources& sources, util::Notes& notes,
                                               const manifest::VersionArg& version_arg,
                                               const Target& target);

} // namespace cudnnctl::release
