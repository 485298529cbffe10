// SPDX-License-Identifier: Apache-2.0
// `cudnnctl recommend`: hard constraints first (each framework build's cuDNN and CUDA under
// the rule that framework applies, the installed CUDA toolkit, the driver minimum of each
// CUDA major, the GPU's compute capability, the platform, --require-pin, the site's recall
// lists, the releases cudnnctl knows), then soft preferences that only rank (the guide's
// workload heuristics, shown as hints beside what the data says; the exact cuDNN a wheel
// pins; the newest release). When no single release serves every framework, the answer is a
// set of slots, one active release per (cuDNN major, CUDA major); when no set works, it names
// the constraints that cannot be met together. Pure: no I/O.
#pragma once

#include "core/result.hpp"
#include "doctor/compat.hpp"
#include "gpu/support.hpp"
#include "recall/recall.hpp"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::doctor {

// --- Interface ---

// A build a --framework can use: a variant of one of its rows, with the rule that row applies.
struct UsableBuild {
  const BuildRow* row = nullptr;
  const BuildVariant* variant = nullptr;
  Check check = Check::minor;
};

// One --framework, resolved against the data.
struct FrameworkNeed {
  Requirement req;
  const FrameworkInfo* info = nullptr;
  std::vector<const BuildRow*> rows; // the rows whose versions meet req.versions
  // "torch 2.4.1", "torch>=2.3", "torch 2.3.1+cu118".
  [[nodiscard]] std::string label() const;
  // Whether a pip install of it brings its own cuDNN (by the framework's data and the extras).
  [[nodiscard]] bool bundles() const;
  // Every variant of its rows, in data order; a +local label keeps only that wheel's.
  [[nodiscard]] std::vector<UsableBuild> builds() const;
};

// Parses `spec` as pip writes it and finds its rows. Errors (ErrorCode::usage, one line): a
// malformed specifier, an unknown framework, versions the data does not cover, a wheel tag
// (+cu118) no row has; each names what is known and where a site adds rows.
[[nodiscard]] Result<FrameworkNeed> resolve_framework(std::string_view spec, const Compat& compat);

struct RecommendInput;
// The GPUs recommend judges: `gpus`, else one of `compute_capability`.
std::vector<gpu::GpuFacts> judged_gpus(const RecommendInput& in);

struct RecommendInput {
  std::vector<FrameworkNeed> frameworks;
  std::optional<std::string> workload; // name or alias
  std::optional<int> cuda_major;       // installed toolkit, --cuda or the config
  std::string cuda_source;             // "--cuda", "the toolkit at /usr/local/cuda, from ..."
  std::optional<std::string> driver;   // installed driver version
  std::optional<std::string> compute_capability; // "9.0", or the node's: "9.0, 6.0"
  // The GPUs judged against manifests/gpu_support.json: one per --compute-capability, else
  // the node's (cudnnctl-smoke --gpus); empty: no compute-capability constraint.
  std::vector<gpu::GpuFacts> gpus;
  std::string gpus_source = "--compute-capability"; // or "the node's 2 GPU(s), ..."
  std::string platform = "linux-x86_64";
  bool require_pin = false;                   // --require-pin / require_pin: pinned labels only
  std::vector<std::string> site_pinned;       // labels pinned in /etc/cudnnctl/pins.d
  const recall::RecallSet* recalls = nullptr; // the site's recall lists, if loaded
  bool alongside_available = false;           // whether this build's install has --alongside
};

// A framework build a candidate serves: "torch 2.4.1" by "cu121, cu124 wheels (built against
// 9.1.0.70)".
struct Served {
  std::string framework;
  std::string detail;
};

// One archive: a (release, CUDA variant) on this platform. Labels of one archive (8.9.7 and
// 8.9.7.29 share their CUDA 12 archive) are one candidate.
struct Candidate {
  std::string label; // the label to install (a pinned one when there is a choice)
  std::string version;
  std::vector<std::string> labels; // every label of this archive
  int cuda = 0;
  bool pinned = false;
  std::optional<uint64_t> size; // archive bytes, from the manifest
  std::string sha256;
  std::vector<std::string> why; // soft preferences it meets, and caveats
  std::vector<Served> serves;
};

// One active release per (cuDNN major, CUDA major).
struct Slot {
  int cudnn_major = 0;
  int cuda = 0;
  Candidate chosen;
  std::vector<Candidate> alternatives; // set answers: others in the same slot
  std::vector<std::string> frameworks; // the --framework labels this slot serves
  std::string command;                 // "cudnnctl install 9.1.0 --cuda 12 [--alongside]"
};

struct Rejection {
  std::string label;
  std::string version;
  std::vector<std::string> reasons; // every hard constraint it violates, per CUDA variant
  std::string summary;              // one line, the key of its group
  std::string kind;                 // platform, cuda, toolkit, framework, driver, cc, recall, pin
};

struct RejectionGroup {
  std::string summary;
  std::string hint; // "try --cuda 12 with a CUDA 12 toolkit", or ""
  std::string kind;
  std::vector<std::string> labels;
};

struct RecallHit {
  std::string label, version;
  int cuda = 0;
  std::string reason, url, list;
};

struct Conflict {
  std::vector<std::string> constraints; // the one, two or three that cannot be met together
  std::string message;
  std::string hint;
};

struct BundleNote {
  std::string framework;
  bool bundled = false; // a pip install brings its own cuDNN
  std::string text;
  std::string system_for;
  std::string source;
};

struct ClaimCheck {
  std::string claim;   // the guide's words
  std::string data;    // what the manifests or the data say
  std::string verdict; // "the reverse", "agrees", "differs", "not measured"
};

struct WorkloadHint {
  std::string workload;
  std::string guide;
  std::string source;
  bool ranked = false; // whether it ranked the recommendation
  std::vector<ClaimCheck> claims;
};

struct Constraint {
  std::string what;
  std::string source;
  bool met = true; // soft preferences: whether the recommendation meets it
};

struct Recommendation {
  std::vector<Slot> slots;             // empty: nothing fits (see conflict)
  std::vector<Candidate> alternatives; // one-slot answers: every other archive that fits
  std::vector<Rejection> rejected;     // releases no slot of the answer can use
  std::vector<RejectionGroup> groups;  // `rejected` grouped by summary
  std::vector<RecallHit> recalled;     // builds on this platform that a recall list names
  std::optional<Conflict> conflict;
  std::vector<BundleNote> bundles;
  std::vector<std::string> notes; // from the rows used (TensorRT's libcudnn.so.8, ...)
  std::optional<WorkloadHint> hint;
  std::vector<Constraint> constraints; // hard
  std::vector<Constraint> preferences; // soft

  [[nodiscard]] const Candidate* recommended() const {
    return slots.empty() ? nullptr : &slots.front().chosen;
  }
};

// The hard constraints release `r` built for CUDA `cuda` violates (empty: it meets them all).
std::vector<std::string> violations(const ReleaseRow& r, int cuda, const RecommendInput& in,
                                    const Compat& compat);

// Ranks what meets every hard constraint. Unknown workload: ErrorCode::usage. Nothing fits is
// not an error: `slots` is empty and `conflict` says why.
[[nodiscard]] Result<Recommendation> recommend(const RecommendInput& in, const Compat& compat);

nlohmann::json to_json(const Recommendation& rec, const RecommendInput& in);
std::vector<std::string> render_recommendation(const Recommendation& rec, const RecommendInput& in);

// "864,984,964 B (825 MiB)".
std::string size_text(uint64_t bytes);

} // namespace cudnnctl::doctor
