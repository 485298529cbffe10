// SPDX-License-Identifier: Apache-2.0
// `cudnnctl doctor`: inventory, resolution, findings; read-only (writes nothing, takes no
// lock, loads no library into this process).
#pragma once

#include "core/result.hpp"
#include "doctor/compat.hpp"
#include "doctor/model.hpp"
#include "recall/recall.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::doctor {

// --- Interface ---

struct DoctorOptions {
  std::filesystem::path root = "/";
  std::string prefix = "/opt/cudnn";
  std::string cuda_home = "/usr/local/cuda";
  std::vector<std::string> scan; // --scan paths, inside the root
  std::string ld_library_path;   // the value of $LD_LIBRARY_PATH (entries inside the root)
  std::string ld_preload;        // $LD_PRELOAD
  std::optional<std::string> conda_prefix;  // $CONDA_PREFIX
  std::filesystem::path proc_dir = "/proc"; // CUDNNCTL_TEST_PROC in tests
  std::optional<ToolkitFacts> cuda;         // the toolkit, detected by the caller
  // The compatibility data with the site's compat.d overlay (nullptr: the built-in data).
  const Compat* compat = nullptr;
  // The signed recall lists (nullptr: none read): installs they name are findings.
  const recall::RecallSet* recalls = nullptr;
  // Findings the caller made while gathering these (an overlay or a list it could not use).
  std::vector<Finding> preset;
};

// Everything doctor reports. Fails only on internal errors; problems of the system are
// findings.
[[nodiscard]] Result<DoctorReport> run_doctor(const DoctorOptions& options);

// The human report, one string per line: a header (cudnnctl version, root, kernel, driver,
// CUDA toolkit, loader environment), the installs, the resolution, the findings by severity.
std::vector<std::string> render_text(const DoctorReport& report, const std::string& version);

} // namespace cudnnctl::doctor
