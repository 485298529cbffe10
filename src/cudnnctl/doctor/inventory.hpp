// SPDX-License-Identifier: Apache-2.0
// Every cuDNN on the system under --root: cudnnctl's store entries, the CUDA homes
// (<home>/lib64, lib, targets/*/lib; the configured home and /usr/local/cuda-*), the system
// library directories (apt: /usr/lib/<multiarch> with the owning dpkg package and its hold
// state), every ld.so.conf directory, LD_LIBRARY_PATH entries, pip wheels
// (site-packages/nvidia/cudnn/lib with the wheel's dist-info version, torch/lib), conda
// environments (conda-meta/cudnn-*.json) and --scan paths; the headers beside each, and every
// include directory holding cuDNN headers.
#pragma once

#include "doctor/ldconf.hpp"
#include "doctor/model.hpp"
#include "doctor/rootfs.hpp"
#include "host/dpkg.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::doctor {

// --- Interface ---

struct InventoryInputs {
  std::string prefix = "/opt/cudnn";
  std::string cuda_home = "/usr/local/cuda";
  std::vector<std::string> scan;            // --scan paths (inside the root)
  std::vector<std::string> ld_library_path; // entries (inside the root)
  std::optional<std::string> conda_prefix;  // $CONDA_PREFIX
  std::string multiarch;
};

struct Inventory {
  std::vector<Install> installs;
  std::vector<HeaderInfo> headers;       // every include directory with cuDNN headers
  std::vector<std::string> sites;        // site-packages directories looked at
  std::vector<std::string> warnings;     // a damaged store, ...
  std::optional<std::string> active_dir; // lib/ of the entry cudnnctl's `current` names
  std::optional<int> active_generation;
  std::string active_entry;
};

// Reads everything listed above; writes nothing. Ids are assigned in discovery order.
Inventory take_inventory(const RootFs& rootfs, const InventoryInputs& in, const LdConf& ldconf,
                         const host::DpkgDb& dpkg);

// The include directory that belongs to a library directory, in the order tried
// (pip nvidia/cudnn/include; /usr/include/<multiarch> and /usr/include for the system
// directories; targets/<t>/include; <dir>/../include).
std::vector<std::string> header_dirs_for(const std::string& lib_dir, const std::string& multiarch);

// "9.14.0.64-1" -> "9.14.0.64", "1:8.9.7.29-1+cuda12.2" -> "8.9.7.29".
std::string upstream_version(const std::string& debian_version);

} // namespace cudnnctl::doctor
