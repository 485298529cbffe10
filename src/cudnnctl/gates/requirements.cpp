// SPDX-License-Identifier: Apache-2.0
#include "gates/requirements.hpp"

#include "gates/gpu_arch.hpp"
#include "host/inuse.hpp"
#include "util/strings.hpp"
#include "validate/driver.hpp"

#include <algorithm>

namespace cudnnctl::gates {

namespace {

// The CUDA variant of the archive against the toolkit under the root. Returns a refusal
// text, or "" (recording the check either way).
std::string check_cuda_toolkit(Env& env, const manifest::Selection& sel, Findings& out) {
  const auto& layout = env.layout;
  auto tk = host::detect_cuda(layout.root(), env.config.cuda_home);
  if (tk && tk->major != sel.cuda_major && env.config.cuda_homes.size() > 1) {
    // Several CUDA homes: the build is linked into (and runs with) the home of its CUDA major.
    if (auto other =
            host::detect_cuda_of_major(layout.root(), env.config.cuda_homes, sel.cuda_major)) {
      tk = other;
    }
  }
  out.requirements.cuda_toolkit = tk;
  if (!tk) {
    std::string w = "no CUDA toolkit found at " + layout.host(env.config.cuda_home).string() +
                    ": the CUDA " + std::to_string(sel.cuda_major) +
                    " build cannot be checked against it (install a CUDA " +
                    std::to_string(sel.cuda_major) + ".x toolkit before using cuDNN)";
    // Without --cuda (flag or config), install has already warned that no toolkit was found.
    if (env.cuda_flag || env.config.cuda) {
      env.notes.warn(w);
    }
    out.check("cuda-toolkit", "skipped", w);
    return {};
  }
  std::string have = std::to_string(tk->major) +
                     (tk->minor >= 0 ? "." + std::to_string(tk->minor) : std::string());
  if (tk->major != sel.cuda_major) {
    return "the archive is cuDNN's CUDA " + std::to_string(sel.cuda_major) +
           " build, but the CUDA toolkit at " + tk->home.string() + " is CUDA " + have + " (" +
           tk->source + "): install the CUDA " + std::to_string(tk->major) + " build (--cuda " +
           std::to_string(tk->major) + ") or a CUDA " + std::to_string(sel.cuda_major) +
           ".x toolkit";
  }
  out.check("cuda-toolkit", "passed",
            "CUDA " + std::to_string(sel.cuda_major) + " build matches the CUDA " + have +
                " toolkit at " + tk->home.string());
  return {};
}

// The NVIDIA driver against the minimum for the archive's CUDA major.
std::string check_driver(Env& env, const manifest::Selection& sel, Findings& out) {
  std::string problem;
  fs::path proc = host::proc_dir();
  auto drv = validate::read_driver_version(proc, &problem);
  auto min = validate::driver_minimum(sel.cuda_major);
  out.requirements.driver = drv ? std::optional<std::string>(drv->str()) : std::nullopt;
  out.requirements.driver_minimum =
      min ? std::optional<std::string>(min->linux_min.str()) : std::nullopt;
  if (!problem.empty()) {
    env.notes.warn(problem);
  }
  if (!drv) {
    out.check("driver", "skipped",
              problem.empty() ? "no NVIDIA driver loaded (" +
                                    (proc / "driver/nvidia/version").string() + " absent)"
                              : problem);
    return {};
  }
  if (!min) {
    std::string w = "no known driver minimum for CUDA " + std::to_string(sel.cuda_major) +
                    " builds; driver " + drv->str() + " not checked";
    env.notes.warn(w);
    out.check("driver", "skipped", w);
    return {};
  }
  if (*drv < min->linux_min) {
    auto newest = validate::newest_cuda_for(*drv);
    std::string fix = newest ? "install the CUDA " + std::to_string(*newest) + " build (--cuda " +
                                   std::to_string(*newest) + ", needs driver >= " +
                                   validate::driver_minimum(*newest)->linux_min.str() +
                                   ") if the release offers it, or upgrade the driver to " +
                                   min->linux_min.str() + " or newer"
                             : "upgrade the driver to " + min->linux_min.str() + " or newer";
    return "the NVIDIA driver " + drv->str() + " is older than the " + min->linux_min.str() +
           " that CUDA " + std::to_string(sel.cuda_major) + " builds need (" + min->source +
           "): " + fix;
  }
  out.check("driver", "passed",
            "driver " + drv->str() + " >= " + min->linux_min.str() + " (CUDA " +
                std::to_string(sel.cuda_major) + ")");
  return {};
}

// --require-gpu: a usable GPU must be visible now.
Status check_gpu(Env& env, Findings& out) {
  smoke::SmokeResult gpus;
  if (out.requirements.gpu_inventory) { // the compute-capability gate already asked the helper
    gpus = *out.requirements.gpu_inventory;
  } else {
    TRY_ASSIGN(gpus, smoke::run_gpu_presence(env.smoke_timeout()));
  }
  out.requirements.gpus = gpus;
  if (gpus.outcome != smoke::Outcome::passed) {
    std::string msg = "--require-gpu: " + gpus.message +
                      " (install where a usable GPU is visible, or drop --require-gpu)";
    out.check("gpu", "failed", msg);
    return fail(ErrorCode::requirement, msg);
  }
  out.check("gpu", "passed", gpus.message);
  return {};
}

// --require-gpu with options that turn the GPU test off: ErrorCode::usage.
Status check_gpu_usage(const Demands& d) {
  if (d.require_gpu && d.no_smoke) {
    return fail(ErrorCode::usage,
                "--require-gpu asks for the GPU smoke test, which --no-smoke turns off");
  }
  if (d.require_gpu && !d.components.empty() &&
      std::find(d.components.begin(), d.components.end(), "runtime") == d.components.end()) {
    return fail(ErrorCode::usage,
                "--require-gpu needs the runtime component (the libraries the GPU test runs)");
  }
  return {};
}

// The refusals of the compatibility checks: exit 7, or with --force warnings.
Status refuse(Env& env, const std::vector<std::string>& refusals, Findings& out) {
  if (refusals.empty()) {
    return {};
  }
  std::string msg = util::join(refusals, "; ");
  if (!env.force) {
    out.check("compatibility", "failed", msg);
    return fail(ErrorCode::requirement, msg + " (--force installs it anyway)");
  }
  for (const auto& r : refusals) {
    env.notes.warn("--force: " + r);
  }
  out.check("compatibility", "warning", "overridden by --force: " + msg);
  return {};
}

} // namespace

Status check_gpu_demand(Env& env, const Demands& d, Findings& out) {
  TRY(check_gpu_usage(d));
  return d.require_gpu ? check_gpu(env, out) : Status{};
}

Status check_requirements(Env& env, const manifest::Selection& sel, const Demands& d, Findings& out,
                          gpu::InventoryPrefetch* gpus) {
  TRY(check_gpu_usage(d));
  out.requirements.checked = true;
  std::vector<std::string> refusals;
  if (auto r = check_cuda_toolkit(env, sel, out); !r.empty()) {
    refusals.push_back(r);
  }
  if (auto r = check_driver(env, sel, out); !r.empty()) {
    refusals.push_back(r);
  }
  // The inventory still coming, nothing else refused, no --require-gpu (which needs it now):
  // the compute-capability check is left to finish_gpu_arch.
  const bool later =
      gpus && gpus->pending() && !gpus->ready() && refusals.empty() && !d.require_gpu;
  if (!later) {
    auto r = gpus && gpus->pending() ? judge_gpu_arch(env, sel, gpus->take(), out)
                                     : check_gpu_arch(env, sel, out);
    if (!r.empty()) {
      refusals.push_back(r);
    }
  }
  TRY(refuse(env, refusals, out));
  return d.require_gpu ? check_gpu(env, out) : Status{};
}

Status finish_gpu_arch(Env& env, const manifest::Selection& sel, gpu::InventoryPrefetch& gpus,
                       Findings& out) {
  if (!gpus.pending()) {
    return {};
  }
  std::vector<std::string> refusals;
  if (auto r = judge_gpu_arch(env, sel, gpus.take(), out); !r.empty()) {
    refusals.push_back(r);
  }
  return refuse(env, refusals, out);
}

} // namespace cudnnctl::gates
