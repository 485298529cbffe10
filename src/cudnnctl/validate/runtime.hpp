// SPDX-License-Identifier: Apache-2.0
// Runtime agreement without a GPU: the staged libraries are loaded in a child process
// (cudnnctl-smoke --probe) by absolute path, and what they report is compared with the
// version the release must be.
#pragma once

#include "smoke/runner.hpp"
#include "validate/header.hpp"
#include "validate/tree.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cudnnctl::validate {

// --- Interface ---

// The probe request for `lib_dir`: the shim, then every library of the set in load order,
// with the version-check functions the set names.
smoke::ProbeRequest probe_request(const std::filesystem::path& lib_dir, const HeaderVersion& v);

struct RuntimeVerdict {
  std::vector<Finding> problems;     // integrity problems of the archive (exit 4)
  std::vector<std::string> warnings; // host-side limits (a dependency this host lacks)
  std::string summary;               // what was verified, for the report
};

// Judges a probe result (pure). Problems: a load crashed or hung, a library fails to load for
// a reason inside cuDNN's own files (undefined symbol, bad ELF, a libcudnn* dependency), the
// shim lacks cudnnGetVersion or returns another number than `v.runtime_number()`, a version
// check returns nonzero, or a libcudnn* came from outside the directory. A dependency that is
// not part of cuDNN and cannot be found (libcublasLt, libz) is a warning.
RuntimeVerdict judge_probe(const smoke::ProbeResult& probe, const HeaderVersion& v);

} // namespace cudnnctl::validate
