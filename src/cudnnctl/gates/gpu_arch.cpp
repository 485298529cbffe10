// SPDX-License-Identifier: Apache-2.0
#include "gates/gpu_arch.hpp"

#include "gpu/inventory.hpp"
#include "host/inuse.hpp"
#include "util/strings.hpp"
#include "validate/driver.hpp"

namespace cudnnctl::gates {

std::string check_gpu_arch(Env& env, const manifest::Selection& sel, Findings& out) {
  return judge_gpu_arch(env, sel, gpu::inventory(env.smoke_timeout()), out);
}

std::string judge_gpu_arch(Env& env, const manifest::Selection& sel,
                           const Result<gpu::Inventory>& inv, Findings& out) {
  const std::string build = "cuDNN " + sel.version + " for CUDA " + std::to_string(sel.cuda_major);
  if (!inv) {
    std::string w = "GPU compute capability not checked: " + inv.error().message;
    env.notes.warn(w);
    out.check("gpu-arch", "skipped", w);
    return {};
  }
  out.requirements.gpu_inventory = inv->report;
  if (inv->gpus.empty()) {
    std::string m = "no GPU visible (" + inv->report.message + "): " + build +
                    " not checked against any compute capability";
    env.notes.info(m, 1);
    out.check("gpu-arch", "skipped", m);
    return {};
  }
  // The kernel driver as NVML says it, else as /proc says it (Blackwell's per-GPU minimum).
  std::optional<std::string> driver = inv->kernel_driver;
  if (!driver) {
    if (auto d = validate::read_driver_version(host::proc_dir(), nullptr)) {
      driver = d->str();
    }
  }
  auto report =
      gpu::check_support(gpu::builtin_support(), sel.version, sel.cuda_major, inv->gpus,
                         driver ? std::optional<std::string_view>(*driver) : std::nullopt);
  out.requirements.gpu_arch = report.gpus;
  if (!report.ok()) {
    out.check("gpu-arch", "failed", report.refusal());
    return report.refusal();
  }
  std::vector<std::string> seen;
  bool all_known = true;
  for (const auto& v : report.gpus) {
    seen.push_back("GPU " + std::to_string(v.gpu.index) + " sm " +
                   (v.gpu.compute_capability.empty() ? "?" : v.gpu.compute_capability));
    if (v.verdict == gpu::Verdict::unknown) {
      all_known = false;
      env.notes.info(v.message, 1);
    }
  }
  out.check(
      "gpu-arch", all_known ? "passed" : "skipped",
      (all_known
           ? build + " has device code for every visible GPU ("
           : build + " not fully checked: no table row or compute capability for every GPU (") +
          util::join(seen, ", ") + ")");
  return {};
}

Status gate_gpu_arch(Env& env, const manifest::Selection& sel, Findings& out) {
  std::string r = check_gpu_arch(env, sel, out);
  if (r.empty()) {
    return {};
  }
  if (!env.force) {
    out.check("compatibility", "failed", r);
    return fail(ErrorCode::requirement, r + " (--force activates it anyway)");
  }
  env.notes.warn("--force: " + r);
  out.check("compatibility", "warning", "overridden by --force: " + r);
  return {};
}

} // namespace cudnnctl::gates
