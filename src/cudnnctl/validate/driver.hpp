// SPDX-License-Identifier: Apache-2.0
// The NVIDIA kernel driver's version, from /proc/driver/nvidia/version (both banner forms),
// and the minimum driver each CUDA major needs.
#pragma once

#include <compare>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::validate {

// --- Interface ---

// "580.159.04", "535.104.05", "570.26": 2 or 3 numeric parts.
struct DriverVersion {
  std::vector<int> parts;
  [[nodiscard]] std::string str() const;
  // Component-wise, missing parts count as 0 (570.26 == 570.26.0).
  std::strong_ordering operator<=>(const DriverVersion& other) const;
  bool operator==(const DriverVersion& other) const { return (*this <=> other) == 0; }
};

// Parses "580.159.04" (2 or 3 dot-separated numbers). Anything else: nullopt.
std::optional<DriverVersion> parse_driver_version(std::string_view text);

// Finds the version in the text of /proc/driver/nvidia/version:
//   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..."
//   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..."
// (the first token after "Kernel Module" [and "for <arch>"] that parses). Garbage: nullopt.
std::optional<DriverVersion> parse_driver_banner(std::string_view text);

// Reads <proc>/driver/nvidia/version. Absent (no NVIDIA driver loaded): nullopt; present but
// unparseable: nullopt with `problem` set.
std::optional<DriverVersion> read_driver_version(const std::filesystem::path& proc_dir,
                                                 std::string* problem = nullptr);

struct DriverMinimum {
  int cuda_major = 0;
  DriverVersion linux_min;
  const char* source = ""; // where the number comes from
};

// Minimum Linux driver for CUDA `cuda_major` builds (minor-version compatibility: any
// driver of at least this version runs every CUDA <major>.x build). Unknown major: nullopt.
std::optional<DriverMinimum> driver_minimum(int cuda_major);

// The highest CUDA major in the table that `driver` supports, nullopt if none.
std::optional<int> newest_cuda_for(const DriverVersion& driver);

} // namespace cudnnctl::validate
