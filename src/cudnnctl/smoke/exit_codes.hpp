// SPDX-License-Identifier: Apache-2.0
// The exit status of the GPU children (cudnnctl-smoke, cudnnctl-bench), one table for the
// children that return it and the runner that reads it (docs/GPU.md). Header only: the children
// link nothing of cudnnctl.
#pragma once

namespace cudnnctl::smoke {

// --- Interface ---

inline constexpr int k_helper_passed = 0;
inline constexpr int k_helper_failed = 1;
inline constexpr int k_helper_usage = 2;
inline constexpr int k_helper_no_gpu = 3;
inline constexpr int k_helper_unusable = 4;

} // namespace cudnnctl::smoke
