// SPDX-License-Identifier: Apache-2.0
// `bench`: the bench library (bench/) over the store's entries: every stored entry, or those
// `--versions` names, on every visible GPU, each version in its own cudnnctl-bench child;
// or the samples of a recorded run (`--from FILE.json`, no GPU needed). Read-only: no lock,
// nothing written but the files the CLI is asked for.
#pragma once

#include "bench/bench.hpp"
#include "ops/context.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct BenchArgs {
  std::vector<std::string> versions;   // labels or versions of stored entries; empty: all
  std::optional<std::string> baseline; // default: the active entry, else the first
  std::vector<int> gpus;               // visible indices; empty: every usable GPU
  std::vector<std::string> workloads;  // empty: resnet50, bert, unet3d
  bool quick = false;                  // the perf gate's subset
  std::optional<int> batch;
  std::string dtype = "fp16";
  std::string conv_api = "graph";
  int iterations = 20;
  bool tiny = false;               // hidden: scaled-down shapes (tests on the fake GPU)
  std::optional<std::string> from; // a recorded run (bench --json output)
};

struct BenchResult : Outcome {
  std::optional<bench::Run> run;
  std::string baseline;
};

// Measures (or reads) and fills `out`; one progress line per finished child on stderr.
// Errors: a --versions entry that is not stored, nothing stored, an unreadable --from
// (ErrorCode::usage); no usable GPU or no cudnnctl-bench (ErrorCode::requirement, exit 7).
[[nodiscard]] Status bench(Context& ctx, const BenchArgs& args, BenchResult& out);

} // namespace cudnnctl::ops
