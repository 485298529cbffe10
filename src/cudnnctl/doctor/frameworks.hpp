// SPDX-License-Identifier: Apache-2.0
// Installed frameworks that load cuDNN themselves, and what they were built for, read from
// files only (no import): torch (torch/lib/libtorch_cuda*.so, the wheel's Requires-Dist pin of
// nvidia-cudnn-cuNN), onnxruntime (onnxruntime/capi/libonnxruntime_providers_cuda.so) and
// TensorFlow (tensorflow/python/platform/build_info.py, libtensorflow_framework.so.2).
#pragma once

#include "doctor/compat.hpp"
#include "doctor/rootfs.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::doctor {

// --- Interface ---

struct Framework {
  std::string kind;    // "torch", "onnxruntime", "tensorflow"
  std::string version; // from its dist-info, "" when unknown
  std::string site;    // the site-packages directory
  std::string library; // the library that asks for libcudnn (system path)
  std::optional<std::string> rpath, runpath;
  int cudnn_major = 0;                 // from DT_NEEDED libcudnn.so.N, else from `expected`
  std::optional<std::string> expected; // cuDNN version it was built for ("9.1.0.70", "8.9", "9")
  std::string expected_source;
  std::optional<std::string> cuda; // CUDA version of the build ("12.1"), when recorded
};

struct DistInfo {
  std::string dir;  // system path of the .dist-info directory
  std::string name; // normalized: lower case, '-' and '.' as '_'
  std::string version;
  std::string metadata; // METADATA text ("" when unreadable)
};

// The first *.dist-info in `site` whose normalized name is one of `names`.
std::optional<DistInfo> find_dist(const RootFs& rootfs, const std::string& site,
                                  const std::vector<std::string>& names);

// From METADATA text: the pinned cuDNN wheel, e.g. {"nvidia-cudnn-cu12", "9.1.0.70"} for
// "Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"".
std::optional<std::pair<std::string, std::string>> cudnn_requirement(std::string_view metadata);

// A string value from TensorFlow's build_info.py ("'cudnn_version': '8'" -> "8").
std::optional<std::string> build_info_value(std::string_view text, std::string_view key);

// Every framework installed in the given site-packages directories.
std::vector<Framework> find_frameworks(const RootFs& rootfs, const std::vector<std::string>& sites,
                                       const Compat& compat);

} // namespace cudnnctl::doctor
