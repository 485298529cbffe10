// SPDX-License-Identifier: Apache-2.0
// Parent side of the cudnnctl-smoke helper: finds it beside the running executable, in
// ../libexec/cudnnctl/ (or at $CUDNNCTL_SMOKE_HELPER), runs it as a child with a clean environment
// (PATH=/usr/bin:/bin, CUDA_VISIBLE_DEVICES when set; never LD_LIBRARY_PATH) and a timeout, and
// turns its JSON lines into results. A crashing or hanging helper is a failed result, never our
// crash.
#pragma once

#include "core/result.hpp"
#include "smoke/exit_codes.hpp"
#include "util/process.hpp"

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudnnctl::smoke {

// --- Interface ---

inline constexpr const char* k_helper_name = "cudnnctl-smoke";

// $<env_var>, else the executable `name` beside /proc/self/exe, else in
// <dir of /proc/self/exe>/../libexec/cudnnctl/ (the installed layout). Not there or not
// executable: ErrorCode::environment saying where it was looked for.
[[nodiscard]] Result<std::string> find_child(const char* name, const char* env_var);

// find_child("cudnnctl-smoke", "CUDNNCTL_SMOKE_HELPER").
[[nodiscard]] Result<std::string> find_helper();

// The child's environment: PATH=/usr/bin:/bin, CUDA_VISIBLE_DEVICES if we have it, and the
// LD_LIBRARY_PATH entries that hold the NVIDIA driver (libcuda.so.1) and no libcudnn*.
std::vector<std::string> helper_env();

// --- GPU smoke test ---

// One operation of the smoke test on one GPU (helper_ops.hpp lists them).
struct OpResult {
  std::string op;     // "conv_fwd_fp32", "conv_bwd_filter_fp16_nhwc", "graph_sdpa_bf16", ...
  std::string api;    // "legacy" or "graph"
  std::string what;   // the shape and type in words
  std::string status; // "passed", "failed", "skipped", "unsupported"
  std::optional<double> max_error;   // largest |gpu - cpu|
  std::optional<double> error_ratio; // worst |gpu - cpu| / allowed (> 1 failed)
  double ms = 0;
  std::string detail;  // the algorithms or engine used
  std::string message; // why failed, skipped or unsupported
};

struct GpuResult {
  int gpu = 0; // CUDA's index among the visible GPUs
  std::string name;
  std::string compute_capability; // "9.0"
  unsigned long long memory_bytes = 0;
  std::string uuid;       // "GPU-..." (what CUDA_VISIBLE_DEVICES accepts)
  std::string pci_bus_id; // "0000:17:00.0"
  std::string mig;        // "disabled", "enabled", "instance" (a MIG slice), "unknown"
  long cudnn_version = 0;
  std::string status;              // "passed", "failed", "skipped" ("usable" in a presence check)
  std::optional<double> max_error; // largest over the operations
  double ms = 0;
  std::string message;
  std::vector<OpResult> ops; // in the order they ran (empty in a presence check)
};

enum class Outcome { passed, failed, skipped };
const char* outcome_name(Outcome o);

struct SmokeResult {
  Outcome outcome = Outcome::failed;
  bool no_gpu = false; // skipped because there is no GPU at all (not: GPUs, none usable)
  std::string message; // one line: why failed/skipped, or what passed
  std::vector<GpuResult> gpus;
  std::optional<long> cudnn_version;
  std::optional<int> driver_version;        // cuDriverGetVersion(), e.g. 13000
  std::optional<std::string> kernel_driver; // NVML's driver version, "580.159.04" (--gpus)
  double ms = 0;
  std::string helper;
};
nlohmann::json to_json(const SmokeResult& r);

// Interprets the helper's output and exit status (pure; see the exit-code table).
SmokeResult parse_smoke(const util::ProcessResult& process, std::chrono::seconds timeout);

// Runs `cudnnctl-smoke --smoke <shim> [--expect N]`. Errors only when the helper cannot be
// found or started (ErrorCode::environment); every outcome of the run is a SmokeResult.
[[nodiscard]] Result<SmokeResult> run_smoke(const std::filesystem::path& shim,
                                            std::optional<long> expect_version,
                                            std::chrono::seconds timeout);

// --- GPU presence (for --require-gpu, before anything is written) ---

// Runs `cudnnctl-smoke --gpus`: every visible GPU with its compute capability, name,
// memory, UUID and MIG state (CUDA_VISIBLE_DEVICES applied), status "usable" or "skipped".
// outcome passed = at least one usable GPU; skipped = none (no_gpu says whether there is no
// GPU at all). This is also the inventory gpu::check_support() judges.
[[nodiscard]] Result<SmokeResult> run_gpu_presence(std::chrono::seconds timeout);

// --- Runtime probe (pre-switch, no GPU) ---

struct ProbeCheck {
  std::string file;
  std::string function;
  bool found = false;
  int status = 0;
};

struct ProbeResult {
  std::vector<std::pair<std::string, std::string>> loaded; // file -> path the loader used
  std::vector<std::pair<std::string, std::string>> errors; // file -> dlerror
  std::optional<long> getversion;
  std::optional<long> cudart;
  std::vector<ProbeCheck> checks;
  std::vector<std::string> foreign; // libcudnn* loaded from outside the directory
  bool completed = false;           // the "done" line arrived
  std::string crashed_in;           // file being loaded when the output stopped
  std::string process;              // "exit status 1", "killed by signal 7 (Bus error)"
  bool process_ok = false;
  std::optional<long> exit_reported; // the helper's last line: its exit status, handlers run
  std::optional<double> warm_ms;     // a WarmHelper's driver initialisation and inventory (ms)
  bool warm_driver = false;          // ... whether a driver answered cuInit then
  bool warm_context = false;         // ... and whether the first GPU's primary context was retained
};

struct ProbeRequest {
  std::filesystem::path dir;                               // absolute, host path of lib/
  std::string shim;                                        // "libcudnn.so.9"
  std::vector<std::string> load;                           // loaded in this order after it
  std::vector<std::pair<std::string, std::string>> checks; // file, version-check function
};

ProbeResult parse_probe(const util::ProcessResult& process, std::chrono::seconds timeout);

[[nodiscard]] Result<ProbeResult> run_probe(const ProbeRequest& request,
                                            std::chrono::seconds timeout);

// install's one GPU child (issue 21), `cudnnctl-smoke --warm`, started before the release is
// resolved: the NVIDIA driver's initialisation and GPU 0's primary context (what both the GPU
// inventory and the version checks need) happen once, beside the manifest fetch and the one
// pass, instead of in two children that compete for the driver. inventory() reads its GPU
// report (run_gpu_presence's); probe() then sends it the runtime probe's request once the
// files exist and judges its output as run_probe does. Destroyed without probe(): the
// child's stdin ends (it exits without loading anything) and it is reaped.
class WarmHelper {
public:
  // Errors only when the helper cannot be found or started (ErrorCode::environment).
  [[nodiscard]] static Result<WarmHelper> start();
  WarmHelper(WarmHelper&&) noexcept;
  WarmHelper& operator=(WarmHelper&&) = delete;
  ~WarmHelper();
  // The GPU report, waiting for it up to `timeout` from now (then the child is killed, and the
  // report says it timed out). Once.
  [[nodiscard]] SmokeResult inventory(std::chrono::seconds timeout);
  // The child reported its inventory whole and waits for a request.
  [[nodiscard]] bool waiting() const { return m_waiting; }
  // The runtime probe in this child, `timeout` counting from now, judged once the helper's
  // last line says its exit handlers ran (util::Child::wait's stop_when): the kernel's
  // teardown of its GPU context is not waited for. Nullopt when it cannot take the request
  // (not waiting, used already, a name with a newline): the caller runs run_probe instead.
  // Files sent early are not sent again; it declines a request for another directory, or
  // after discard_early().
  [[nodiscard]] std::optional<ProbeResult> probe(const ProbeRequest& request,
                                                 std::chrono::seconds timeout);

  // Early loads (install's repack pass, ops/early_probe.hpp): sends `file` of `dir` (as a library
  // to load, or as the request's shim) to the child now, from any thread, also while another reads
  // its inventory: the child loads it once its inventory is out (the request lines wait in the
  // pipe). False when it cannot be sent (a newline in a name, another directory than the
  // first file's, the child gone or discarded): then probe() sends it, or declines.
  enum class EarlyAs { library, shim };
  [[nodiscard]] bool send_early(const std::filesystem::path& dir, const std::string& file,
                                EarlyAs as = EarlyAs::library);
  // What was sent early belongs to a tree that is gone (a refused repack): probe() declines,
  // so that a child of its own probes the next tree.
  void discard_early();
  // Why the last probe() declined ("" when it did not).
  [[nodiscard]] const std::string& declined() const { return m_declined; }

private:
  struct Early;
  explicit WarmHelper(util::Child child);
  util::Child m_child;
  bool m_waiting = false;
  std::unique_ptr<Early> m_early; // guarded by its own mutex
  std::string m_declined;
};

// --- Loader check (root "/") ---

struct WhichResult {
  std::string soname;
  std::optional<std::string> path; // as the loader found it
  std::optional<std::string> real; // realpath of it
  std::string error;               // dlerror, or why the helper failed
};

// Runs `cudnnctl-smoke --which <soname>`: a real child without LD_LIBRARY_PATH resolving
// `soname` through the ld.so cache.
[[nodiscard]] Result<WhichResult> run_which(const std::string& soname,
                                            std::chrono::seconds timeout);

} // namespace cudnnctl::smoke
