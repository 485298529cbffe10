// SPDX-License-Identifier: Apache-2.0
// Which running processes map files of a store entry (from /proc/<pid>/maps), so that gc
// and remove never pull a library out from under a running job.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cudnnctl::host {

// --- Interface ---

struct ProcessUse {
  int pid = 0;
  std::string command; // /proc/<pid>/comm
};

// Processes with a mapping under `dir` (host path). Reads /proc, or the directory named by
// CUDNNCTL_TEST_PROC in tests. Unreadable processes are skipped.
std::vector<ProcessUse> processes_using(const std::filesystem::path& dir);

// "1234 (python3), 5678 (java)": the processes, for messages.
std::string describe_users(const std::vector<ProcessUse>& users);

// The /proc directory to read host facts from (CUDNNCTL_TEST_PROC overrides /proc).
std::filesystem::path proc_dir();

} // namespace cudnnctl::host
