// SPDX-License-Identifier: Apache-2.0
// Renderings of a bench Run: the side-by-side table with ratios against a baseline version,
// JSON (which parse_json reads back: recorded runs render again without a GPU), CSV, and an
// SVG with one bar chart per workload, drawn here (no plotting library).
#pragma once

#include "bench/bench.hpp"

#include <string>
#include <string_view>

namespace cudnnctl::bench {

// --- Interface ---

// The versions in the order they first appear; `baseline` when it is one of them, else the
// first (what the ratios are against).
std::vector<std::string> versions_of(const Run& run);
std::string baseline_of(const Run& run, const std::string& wanted);

// Text: the machine (GPU, driver, clocks), the scope note, then per workload and GPU one row
// per version: throughput, ratio to the baseline, time per iteration, first call, workspace,
// peak memory, status.
std::string render_table(const Run& run, const std::string& baseline);

// {"note", "baseline", "gpus": [...], "samples": [...with "ratio"...]}.
std::string render_json(const Run& run, const std::string& baseline);

// One row per sample; a header line first.
std::string render_csv(const Run& run, const std::string& baseline);

// One SVG document: a horizontal bar chart of throughput per workload (one panel each, a
// bar per GPU and version, the ratio written beside it).
std::string render_svg(const Run& run, const std::string& baseline);

// Reads render_json's output. Error (ErrorCode::usage) when it is not such a document.
[[nodiscard]] Result<Run> parse_json(std::string_view text);

} // namespace cudnnctl::bench
