// SPDX-License-Identifier: Apache-2.0
// `check [--expect VERSION|GEN] [--smoke] [--prometheus FILE] [--nfd FILE]`: the read-only
// face of cudnnctl for health checkers (NHC, Slurm prologs and HealthCheckProgram,
// node-exporter, node-feature-discovery). One line on stdout; healthy is exit 0, anything
// else ErrorCode::problems (exit 8) with a reason that tools parse after "cudnnctl: ".
// It writes nothing under --root (no lock, no state directory): only the operator's
// --prometheus and --nfd files, each replaced atomically, also when unhealthy.
#pragma once

#include "ops/context.hpp"
#include "recall/recall.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

// The slot label of the Prometheus line (several slots come with a later issue).
inline constexpr const char* k_primary_slot = "primary";

struct CheckOptions {
  // A release label or version prefix (9.16.0, 9.16.0.29, 9.16) the active build must match,
  // or a plain integer: the generation that must be active.
  std::optional<std::string> expect;
  bool smoke = false;                    // also run the GPU smoke test (a job prolog)
  std::optional<std::string> prometheus; // host path of a node-exporter textfile
  std::optional<std::string> nfd;        // host path of an NFD local feature file
  // --slot S: check slot S's active entry (files, drop-in line, recall, expect) instead of
  // the primary's; `active` stays the primary (the contract), `checked` is S's.
  std::optional<std::string> slot;
};

// The smoke test as check saw it: run now, or carried over from the previous --prometheus
// file when it described the same generation and version.
struct CheckSmoke {
  std::string status;   // "passed", "failed", "skipped"
  double seconds = 0;   // wall time of the run, helper start included
  double timestamp = 0; // when it ran (Unix seconds)
  std::string message;
};

// Outcome::active: the active generation, if any.
struct CheckResult : Outcome {
  bool healthy = false;
  std::string reason; // the first problem (empty when healthy)
  std::vector<std::string> problems;
  std::string slot = k_primary_slot; // the slot checked (--slot S: S)
  std::optional<GenInfo> checked;    // its active generation (the primary's without --slot)
  // The slots kept alongside (store/slots.hpp): their id and active generation, one
  // cudnnctl_info line each.
  std::vector<std::pair<std::string, GenInfo>> other_slots;
  bool files_ok = false;                  // the quick file check of the active generation
  std::optional<recall::Recall> recalled; // the signed recall naming the active build
  int frameworks_incompatible = 0;        // frameworks that cannot load the checked build
  std::optional<double> last_switch;      // mtime of <prefix>/current (Unix seconds)
  std::optional<CheckSmoke> smoke;
  bool smoke_ran = false; // run by this check (else carried over, or none)
  double checked_at = 0;  // Unix seconds
};

// Evaluates health without writing anything: an active generation; no interrupted
// transaction; every recorded file, link and directory of the active store entry present
// with its recorded kind, size, mode and link target (stat only: `verify` hashes);
// nothing extra in it; the loader drop-in naming its lib/; no signed recall list naming the
// active build (and none refused under require_signed_recalls); no framework on the node that
// cannot load it (ops/framework_gate.hpp); `expect`; with `smoke`, the GPU
// smoke test (failed is unhealthy; skipped, for lack of a usable GPU, is not). With
// options.slot, the same for that slot's entry (the drop-in must name its lib/ when the loader
// serves its cuDNN major from it). Errors only when the store cannot be read at all, and for an
// unknown --slot (ErrorCode::usage).
[[nodiscard]] Status evaluate_check(Context& ctx, const CheckOptions& options, CheckResult& out);

// node-exporter textfile text for `r` (cudnnctl_info{version,cuda,generation,slot} 1,
// cudnnctl_healthy, cudnnctl_verify_ok, cudnnctl_recalled, cudnnctl_frameworks_incompatible,
// cudnnctl_last_switch_timestamp_seconds,
// cudnnctl_smoke_*, cudnnctl_check_timestamp_seconds).
std::string prometheus_text(const CheckResult& r);

// node-feature-discovery local feature file text: cudnn.version=, cudnn.major=, cudnn.cuda=,
// cudnn.smoke= (passed, failed, skipped or unknown), cudnn.recalled=,
// cudnn.frameworks_compatible=, cudnn.healthy=.
std::string nfd_text(const CheckResult& r);

// The smoke result a previous prometheus_text() recorded, if it described `active`.
std::optional<CheckSmoke> smoke_from_prometheus(std::string_view text, const GenInfo& active);

// The command: evaluate_check, then the files (the CLI prints its one line). Unhealthy:
// ErrorCode::problems with the reason and check_more(). A file that cannot be written:
// ErrorCode::environment.
[[nodiscard]] Status check(Context& ctx, const CheckOptions& options, CheckResult& out);

// " (+N more problem(s))" when there is more than one problem, else "".
std::string check_more(const CheckResult& r);

// `v` with `decimals` digits after the point ("%.*f").
std::string check_number(double v, int decimals);

} // namespace cudnnctl::ops
