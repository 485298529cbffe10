// SPDX-License-Identifier: Apache-2.0
// Host facts doctor reports: the NVIDIA kernel module's version (/proc/driver/nvidia/version,
// under CUDNNCTL_TEST_PROC in tests), the user-space driver's (the file libcuda.so.1 resolves
// to, libcuda.so.<version>), and the kernel release.
#pragma once

#include "doctor/loader.hpp"
#include "doctor/model.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cudnnctl::doctor {

// --- Interface ---

struct ModuleBanner {
  std::string version; // "580.159.04"
  std::string kind;    // "open" or "proprietary"
};

// Parses both banner forms:
//   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..."
//   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 ..."
std::optional<ModuleBanner> parse_driver_banner(std::string_view text);

// "libcuda.so.580.159.04" -> "580.159.04"; nullopt for other names.
std::optional<std::string> libcuda_version(std::string_view filename);

// The kernel module from <proc_dir>/driver/nvidia/version, the user-space driver through the
// loader model (libcuda.so.1 as a plain process finds it).
DriverFacts read_driver(const std::filesystem::path& proc_dir, const SearchEnv& env);

// <proc_dir>/sys/kernel/osrelease, else uname's release.
std::string kernel_release(const std::filesystem::path& proc_dir);

} // namespace cudnnctl::doctor
