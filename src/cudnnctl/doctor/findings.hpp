// SPDX-License-Identifier: Apache-2.0
// The checks: each turns facts of the DoctorReport (installs, headers, resolution, host) into
// findings with a stable code, a severity, the paths involved and a fix. docs/DOCTOR.md lists
// every code with the failure mode of shared/reference/cudnn-failure-modes.md it detects.
#pragma once

#include "doctor/compat.hpp"
#include "doctor/ldconf.hpp"
#include "doctor/model.hpp"
#include "doctor/rootfs.hpp"
#include "recall/recall.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::doctor {

// --- Interface ---

struct FindingContext {
  const RootFs* rootfs = nullptr;
  const LdConf* ldconf = nullptr;
  const LdCache* cache = nullptr;
  const Compat* compat = nullptr;
  std::string multiarch;
  std::vector<std::string> store_warnings;
  std::optional<std::string> active_dir;  // lib/ of the active store entry
  std::optional<std::string> dropin_file; // /etc/ld.so.conf.d/00-cudnnctl.conf when present
  std::optional<std::string> dropin_dir;  // the directory it names
  std::optional<std::string> journal;     // the journal's path when one is present
  std::vector<std::string> leftovers;     // .staging-*, .trash-*, *.tmp.* paths
  std::vector<std::string> held;          // "package version" of held cuDNN packages
  std::string cuda_home;                  // the configured CUDA home (system path)
  std::string prefix;                     // cudnnctl's prefix (system path)
};

// cudnnctl's own state: interrupted transactions, leftovers, a damaged store, the drop-in.
void add_store_findings(DoctorReport& r, const FindingContext& ctx);
// /etc/ld.so.conf includes and the ld.so cache against the directories it should map.
void add_loader_config_findings(DoctorReport& r, const FindingContext& ctx);
// Per install and header directory: links, versions, completeness, headers, packages.
void add_install_findings(DoctorReport& r, const FindingContext& ctx);
// The driver, the CUDA majors, and what each consumer loads.
void add_runtime_findings(DoctorReport& r, const FindingContext& ctx);
// The CUDA home and the headers builds see (findings_home.cpp).
void add_home_findings(DoctorReport& r, const FindingContext& ctx);
// Installs a signed recall list names (findings_recall.cpp): cudnnctl's active entry is an
// error, any other copy a warning.
void add_recall_findings(DoctorReport& r, const recall::RecallSet& recalls);
// Errors first, then warnings, then info; otherwise in the order found.
void sort_findings(DoctorReport& r);

// Appends one finding.
void add(DoctorReport& r, std::string code, Severity sev, std::string message,
         std::vector<std::string> paths, std::string fix);

} // namespace cudnnctl::doctor
