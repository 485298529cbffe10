// SPDX-License-Identifier: Apache-2.0
// Facts about the machine: platform key, installed CUDA toolkit (under --root).
#pragma once

#include "util/result.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::host {

// --- Interface ---

// NVIDIA platform key of this machine: x86_64 -> "linux-x86_64", aarch64 -> "linux-sbsa"
// (server ARM; Jetson's "linux-aarch64" is never guessed). Other machines: ErrorCode::usage
// asking for --platform.
[[nodiscard]] Result<std::string> host_platform();

// The platform keys cudnnctl installs (Linux only; .zip Windows archives are not handled).
bool is_supported_platform(std::string_view platform);

struct CudaToolkit {
  int major = 0;
  int minor = 0;                 // -1 when unknown
  std::filesystem::path home;    // path inside the root, e.g. /usr/local/cuda
  std::string source;            // "version.json", "cuda_runtime_api.h", "libcudart SONAME", "dpkg", "pip"
};

// Detects the CUDA toolkit under `root` at `cuda_home` (inside the root, default
// /usr/local/cuda; symlinks resolved inside the root): version.json, then CUDART_VERSION in
// include/cuda_runtime_api.h, then the libcudart.so.N file name/SONAME in lib64/ or
// targets/*/lib, then dpkg's status (cuda-cudart-N-M), then pip metadata
// (nvidia_cuda_runtime*-N.M*.dist-info under the home). None found: std::nullopt.
[[nodiscard]] std::optional<CudaToolkit> detect_cuda(const std::filesystem::path& root,
                                                     const std::filesystem::path& cuda_home);

} // namespace cudnnctl::host
