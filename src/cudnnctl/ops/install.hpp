// SPDX-License-Identifier: Apache-2.0
// `install VERSION`: resolve, download (or --archive), verify, extract into staging,
// validate, publish the store entry, create a generation, switch, check, commit.
#pragma once

#include "gates/findings.hpp"
#include "ops/activate.hpp"
#include "ops/adopt.hpp"
#include "ops/context.hpp"
#include "release/pass.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct InstallOptions {
  std::string version;
  std::optional<std::string> archive;  // --archive FILE (host path): .tar.xz or a .tar.zst repack
  std::optional<std::string> sidecar;  // --sidecar FILE: the repack's sidecar (host path)
  std::vector<std::string> components; // empty = default (runtime, headers)
  bool no_smoke = false;
  bool require_gpu = false;
  std::optional<double> perf_gate; // --perf-gate PCT, else config perf_gate
  bool alongside = false;          // --alongside: in its own slot, the others kept
  bool no_cache = false;           // --no-cache (or config keep_cache = false)

  [[nodiscard]] gates::Demands demands() const {
    return {components, no_smoke, require_gpu, perf_gate, alongside, {}};
  }
};

// Parses "--components runtime,headers,static" into a sorted set; unknown names:
// ErrorCode::usage listing the valid ones.
[[nodiscard]] Result<std::vector<std::string>> parse_components(const std::string& list);

// The mirror's repack an install streamed instead of NVIDIA's archive (data.archive.repack).
using RepackRef = release::RepackRef;

// The archive an install uses (data.archive).
struct ArchiveRef {
  std::string version;
  int cuda = 0;
  std::string platform;
  std::string url;
  std::string sha256;
  uint64_t size = 0;
  std::string form;        // what was installed: "repack" or "xz" (NVIDIA's archive); empty: none
  std::string form_reason; // why
  std::optional<RepackRef> repack;
};

struct InstallResult : SwitchResult {
  std::optional<std::string> requested; // VERSION as given
  std::optional<std::string> version;   // the full version it resolved to
  std::optional<ArchiveRef> archive;
  std::optional<std::vector<std::string>> components;
  PreInstall adoption;                  // what install found in the CUDA home first
  std::optional<int> active_generation; // already_active: the generation, for the message
  enum class Said {
    switched,        // SwitchResult::said tells
    would_install,   // --dry-run: "would install and activate cuDNN ..."
    would_not_change // --dry-run: "cuDNN <version> is already active"
  } install_said = Said::switched;
  std::string platform; // would_install
  int cuda = 0;         // would_install
  // After a run that was not a dry run: the bytes left in the download cache, and whether
  // this install's archive was kept there (false: --no-cache or keep_cache = false).
  std::optional<uint64_t> cache_bytes;
  bool cache_kept = true;
};

// The whole install (dry-run aware); `out` is filled as far as it got. With --no-cache (or
// keep_cache = false) the archive (and its repack) leave the download cache once the
// command is over, also after a failure, except a network failure (its partial is kept so
// that the next try resumes).
[[nodiscard]] Status install(Context& ctx, const InstallOptions& options, InstallResult& out);

} // namespace cudnnctl::ops
