// SPDX-License-Identifier: Apache-2.0
// Which GPUs a cuDNN build can run: the table of manifests/gpu_support.json (compute
// capabilities per release range and CUDA variant, driver minimums, a source per row),
// compiled into the binary, and the pure judgement of a list of GPUs against one build.
// The GPUs come from `cudnnctl-smoke --gpus` (smoke::run_gpu_presence, smoke::gpu_facts);
// the callers (install/use refusal with exit 7, doctor, recommend) are wired in ops/.
#pragma once

#include "core/result.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::gpu {

// --- Interface ---

struct SupportRow {
  std::string cudnn_min;                         // "9.11.0", inclusive
  std::optional<std::string> cudnn_max;          // inclusive; none: every later release
  int cuda = 0;                                  // CUDA major of the build (the redist variant)
  std::vector<std::string> compute_capabilities; // "7.5", "9.0", ...
  std::string driver_linux_min;                  // "525.60.13"
  std::map<std::string, std::string> cc_driver_linux_min; // e.g. Blackwell: "10.0" -> "570.26"
  std::string source;
};

struct SupportTable {
  std::vector<SupportRow> rows;
  // The row covering release `release` ("9.11.0" or "9.11.0.98") built for CUDA `cuda`.
  [[nodiscard]] const SupportRow* find(std::string_view release, int cuda) const;
};

// Parses the JSON of manifests/gpu_support.json. Error (ErrorCode::usage) naming the row and
// field that is missing or malformed.
[[nodiscard]] Result<SupportTable> parse_support_table(std::string_view json_text);

// The table compiled from manifests/gpu_support.json (parsed once; a malformed built-in
// table is a build defect: the unit tests parse it).
const SupportTable& builtin_support();

// A GPU as the smoke helper reports it.
struct GpuFacts {
  int index = 0; // CUDA's index among the visible GPUs
  std::string name;
  std::string compute_capability; // "9.0"; empty when unknown
};

enum class Verdict {
  supported,   // the build has device code for this GPU (and the driver is new enough)
  unsupported, // it has not, or the driver is too old for this GPU: refuse (exit 7, --force)
  unknown,     // no row covers the build, or the GPU did not say its compute capability
};
const char* verdict_name(Verdict v); // "supported", "unsupported", "unknown"

struct GpuVerdict {
  GpuFacts gpu;
  Verdict verdict = Verdict::unknown;
  // One line: "GPU 0 (Tesla P100, sm 6.0): ..." saying why, and for an unsupported GPU
  // what would work instead (a release, another CUDA variant, a driver).
  std::string message;
  std::string source; // the table row's source, when a row decided
};

struct SupportReport {
  std::vector<GpuVerdict> gpus;
  // No GPU is unsupported (unknown ones are not refusals).
  [[nodiscard]] bool ok() const;
  // The messages of the unsupported GPUs, "; "-joined ("" when ok()).
  [[nodiscard]] std::string refusal() const;
};

// Pure: judges every GPU against `release` built for CUDA `cuda`. `driver` (the kernel
// driver's version, "580.159.04") adds the per-GPU driver minimum (Blackwell needs 570.26
// with CUDA 12 builds) and the build's own; without it only device code is judged.
[[nodiscard]] SupportReport check_support(const SupportTable& table, std::string_view release,
                                          int cuda, const std::vector<GpuFacts>& gpus,
                                          std::optional<std::string_view> driver = std::nullopt);

// The newest release of the table with device code for every GPU of `gpus` in its CUDA
// `cuda` build ("9.10.2"; an open-ended row gives its first release), for a fix line; nullopt
// when no row of that variant runs them all.
[[nodiscard]] std::optional<std::string> release_for(const SupportTable& table, int cuda,
                                                     const std::vector<GpuFacts>& gpus);

} // namespace cudnnctl::gpu
