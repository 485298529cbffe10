// SPDX-License-Identifier: Apache-2.0
// How many cores this process may run on: the thread counts of the one pass (writers, file
// hashes, zstd decoders, chunk digests) and of backups follow it. A Slurm job's cpuset, a
// `taskset`, or a container's CPU quota (`docker run --cpus`, a systemd CPUQuota=) gives fewer
// cores than the machine has; std::thread::hardware_concurrency() counts the machine's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cudnnctl::util {

// --- Interface ---

// The smallest of: the online cores, the calling thread's CPU affinity (sched_getaffinity),
// and the cgroup v2 CPU quota of this process's cgroup and its ancestors (cpu.max, rounded
// up). At least 1. Read once per process.
[[nodiscard]] size_t usable_cores();

// The cores a cgroup v2 `cpu.max` text allows ("200000 100000" -> 2, "150000 100000" -> 2,
// "max 100000" -> nullopt, unreadable text -> nullopt).
[[nodiscard]] std::optional<size_t> cores_of_cpu_max(std::string_view text);

// The same count computed now, without the once-per-process cache (for tests).
[[nodiscard]] size_t usable_cores_now();

// The tightest cgroup v2 CPU quota on the way from the cgroup that `proc_self_cgroup` (the text
// of /proc/self/cgroup) names up to the root of the hierarchy mounted at `cgroup_root`
// (/sys/fs/cgroup), in cores; nullopt when there is none or on cgroup v1.
[[nodiscard]] std::optional<size_t> quota_cores(std::string_view proc_self_cgroup,
                                                const std::string& cgroup_root);

} // namespace cudnnctl::util
