// SPDX-License-Identifier: Apache-2.0
// Facts about the machine: platform key, installed CUDA toolkit (under --root).
#pragma once

#include "core/result.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::host {

// --- Interface ---

// NVIDIA platform key of this machine (uname): x86_64 -> "linux-x86_64", aarch64 ->
// "linux-sbsa" (server ARM; Jetson's "linux-aarch64" is never guessed). Other machines or a
// kernel other than Linux: ErrorCode::usage asking for --platform.
[[nodiscard]] Result<std::string> host_platform();

// The platform key for a `uname -m` machine name (the pure part of host_platform):
// "x86_64"/"amd64" -> "linux-x86_64", "aarch64"/"arm64" -> "linux-sbsa"; others:
// ErrorCode::usage naming the machine and asking for --platform.
[[nodiscard]] Result<std::string> platform_for_machine(std::string_view machine);

// The platform keys cudnnctl installs (Linux only; .zip Windows archives are not handled).
bool is_supported_platform(std::string_view platform);

struct CudaToolkit {
  int major = 0;
  int minor = 0;              // -1 when unknown
  std::filesystem::path home; // path inside the root, e.g. /usr/local/cuda (as asked for)
  std::string source; // "version.json", "cuda_runtime_api.h", "libcudart SONAME", "dpkg", "pip"
  // `home` with its symlinks resolved inside the root, e.g. /usr/local/cuda-13.0; link
  // targets computed for the toolkit must start here (traps.md). Empty when unresolvable.
  std::filesystem::path resolved;
};

// Detects the CUDA toolkit under `root` (a host path; "" or "/" for the live system) at
// `cuda_home` (a path inside the root; empty means /usr/local/cuda; symlinks resolved inside
// the root, absolute targets re-rooted, never leaving it). Tried in order, first hit wins:
// 1. <home>/version.json {"cuda": {"version": "12.4.1"}} -> 12.4
// 2. "#define CUDART_VERSION 13000" in <home>/include/cuda_runtime_api.h -> 13.0
// 3. a libcudart.so.N[.M...] file name in <home>/lib64/, <home>/lib/ or <home>/targets/*/lib/
//    -> N (minor M, or -1 when the name has none); the highest when several
// 4. <root>/var/lib/dpkg/status: an installed cuda-cudart-N-M package -> N.M (the one named
//    like the resolved home "cuda-N.M" when present, else the highest)
// 5. pip metadata nvidia_cuda_runtime[_cuNN]-N.M.P.dist-info in <home>/dist-info/ or <home>/
// A file that is missing, unreadable or malformed just means "not this source". Nothing
// found: std::nullopt (callers warn; a missing toolkit is not a refusal). Reads only.
[[nodiscard]] std::optional<CudaToolkit> detect_cuda(const std::filesystem::path& root,
                                                     const std::filesystem::path& cuda_home);

// The toolkit of the first of `homes` (paths inside the root, e.g. config cuda_homes) whose
// CUDA major is `major`; nullopt when none is. Several CUDA homes: a build for CUDA `major`
// runs with that one. Reads only.
[[nodiscard]] std::optional<CudaToolkit> detect_cuda_of_major(const std::filesystem::path& root,
                                                              const std::vector<std::string>& homes,
                                                              int major);

} // namespace cudnnctl::host
