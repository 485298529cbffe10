// SPDX-License-Identifier: Apache-2.0
// Installed frameworks that load cuDNN themselves, and what they were built for, read from
// files only (no import): torch (torch/lib/libtorch_cuda*.so, the wheel's Requires-Dist pin of
// nvidia-cudnn-cuNN), onnxruntime (onnxruntime/capi/libonnxruntime_providers_cuda.so) and
// TensorFlow (tensorflow/python/platform/build_info.py, libtensorflow_framework.so.2), JAX's
// CUDA plugin (the jax_cuda12_plugin / jax_cuda13_plugin wheel's nvidia-cudnn pin) and
// TensorRT (libnvinfer.so.<version>, in tensorrt_libs/ of a site or a system library directory).
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
  std::string kind;    // "torch", "onnxruntime", "tensorflow", "jax", "tensorrt"
  std::string version; // from its dist-info, "" when unknown
  std::string site;    // the site-packages directory (TensorRT: the library's directory)
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
// "Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"". Pin::minimum
// also takes the lower bound of a range, in an extra too (JAX's plugin: "nvidia-cudnn-cu12
// <10.0,>=9.8; extra == \"with-cuda\"" -> "9.8").
enum class Pin { exact, minimum };
std::optional<std::pair<std::string, std::string>> cudnn_requirement(std::string_view metadata,
                                                                     Pin pin = Pin::exact);

// A string value from TensorFlow's build_info.py ("'cudnn_version': '8'" -> "8").
std::optional<std::string> build_info_value(std::string_view text, std::string_view key);

// Every framework installed in the given site-packages directories, and the TensorRT
// libraries in `lib_dirs` (system library directories).
std::vector<Framework> find_frameworks(const RootFs& rootfs, const std::vector<std::string>& sites,
                                       const Compat& compat,
                                       const std::vector<std::string>& lib_dirs = {});

// The site-packages directories of the standard places, as glob patterns: the system's and
// /usr/local's Python, /opt/*/.venv and /opt/*/venv, ~/.local of root and of /home/*.
const std::vector<std::string>& standard_site_patterns();

// The conda environments of the standard places: /opt/conda and /opt/conda/envs/*.
std::vector<std::string> standard_conda_envs(const RootFs& rootfs);

// Every site-packages directory of the standard places, of $CONDA_PREFIX and under `extra`
// (config key framework_paths, --scan): a site-packages or dist-packages directory itself, an
// environment (DIR/lib/python3*/site-packages) or a directory of environments
// (DIR/*/lib/python3*/site-packages, DIR/*/.venv/...). Each directory once, by real path.
std::vector<std::string> python_sites(const RootFs& rootfs,
                                      const std::optional<std::string>& conda_prefix,
                                      const std::vector<std::string>& extra);

// The copy of libcudnn.so.<major> that `f` loads by itself, not through the loader's cache:
// through its DT_RPATH or DT_RUNPATH ($ORIGIN expanded), or the pip wheel's copy in its site
// (site/nvidia/cudnn/lib, which torch, TensorFlow and JAX load first). nullopt: it loads the
// system's.
std::optional<std::string> own_cudnn_copy(const RootFs& rootfs, const Framework& f,
                                          const std::string& multiarch);

} // namespace cudnnctl::doctor
