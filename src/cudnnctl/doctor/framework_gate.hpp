// SPDX-License-Identifier: Apache-2.0
// The framework gate's verdicts (issue 36): which frameworks on the node load the cuDNN the
// loader serves (doctor's inventory of frameworks: site-packages, conda environments, the
// config's framework_paths, TensorRT in the system library directories), and whether each
// still runs after a switch, by the one rule set of compat.hpp (check_accepts,
// Compat::check_for). Read-only; ops/framework_gate.hpp refuses the switch, `check` reports
// the active build, `recommend` takes the node's frameworks from here.
#pragma once

#include "doctor/compat.hpp"
#include "doctor/frameworks.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::doctor {

// --- Interface ---

// What the loader serves for one cuDNN major after the switch.
struct GateTarget {
  int major = 0;
  std::optional<std::string> version; // nullopt: cudnnctl serves none of this major afterwards
};

struct GateInput {
  std::filesystem::path root = "/";
  std::optional<std::string> conda_prefix; // $CONDA_PREFIX
  std::vector<std::string> extra;          // framework_paths and --scan, inside the root
  std::vector<GateTarget> targets;
  int cuda_major = 0; // the way out names releases with a build for it (0: any)
  std::string platform = "linux-x86_64";
  const Compat* compat = nullptr; // nullptr: the built-in data
};

// One consumer and what the switch does to it. verdict: "ok", "breaks", "own-copy" (it loads
// its own cuDNN: the switch does not reach it), "unaffected" (another major, or no cuDNN).
struct FrameworkVerdict {
  std::string name;         // "torch", "tensorflow", "jax", "onnxruntime", "tensorrt"
  std::string version;      // the framework's, "" when unknown
  std::string path;         // its site-packages (TensorRT: the library's directory)
  std::string built_for;    // the cuDNN it was built for, "" when unknown
  std::string built_source; // where that comes from
  std::string would_load;   // "9.14.0.64", "nothing", or the path of its own copy
  std::string verdict;
  std::string why; // the rule, or why it is not affected
};

struct GateReport {
  std::vector<FrameworkVerdict> frameworks;
  // A version that satisfies every framework found, or the slots when no single one does;
  // "" when nothing is known to serve them.
  std::string way_out;
  [[nodiscard]] std::vector<const FrameworkVerdict*> breaking() const;
};

// The frameworks on the node (every site python_sites finds, TensorRT in the default library
// directories too).
std::vector<Framework> node_frameworks(const RootFs& rootfs, const GateInput& in,
                                       const Compat& compat);

// Each framework found against in.targets.
GateReport evaluate_gate(const GateInput& in);

// "torch 2.11.0 at SITE: built for cuDNN 9.19.0.56, would load 9.14.0.64: breaks (same major
// and a runtime minor >= the built minor are required)".
std::string describe(const FrameworkVerdict& v);

// The refusal: "<switching> would break N framework(s) that load the system's cuDNN: ...;
// nothing was changed; ways out: <way_out>, or --force". `forced`: the warning of --force
// ("<switching> breaks ...; they fail until ...").
std::string refusal(const GateReport& report, const std::string& switching, bool forced);

} // namespace cudnnctl::doctor
