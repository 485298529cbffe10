// SPDX-License-Identifier: Apache-2.0
#include "ops/doctor.hpp"

#include "doctor/compat.hpp"
#include "doctor/doctor.hpp"
#include "gpu/inventory.hpp"
#include "host/host.hpp"
#include "host/inuse.hpp"
#include "ops/recalls.hpp"

#include <cstdlib>

namespace cudnnctl::ops {

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The node's GPUs (cudnnctl-smoke --gpus) into the report, and a finding when the active
// cudnnctl generation's build has no device code for one of them.
void add_gpus(Context& ctx, doctor::DoctorReport& report) {
  auto inv = gpu::inventory(std::chrono::seconds(std::max(1, ctx.config().smoke_timeout)));
  if (!inv) {
    report.host.gpus_note = "not checked: " + inv.error().message;
    return;
  }
  for (const auto& g : inv->report.gpus) {
    report.host.gpus.push_back(
        {g.gpu, g.name, g.compute_capability, g.memory_bytes, g.mig, g.uuid, g.status});
  }
  if (inv->gpus.empty()) {
    report.host.gpus_note = inv->report.message;
    return;
  }
  for (const auto& i : report.installs) {
    if (!i.active || !i.version || !i.cuda_major) {
      continue;
    }
    auto verdicts = gpu::check_support(gpu::builtin_support(), *i.version, *i.cuda_major, inv->gpus,
                                       inv->kernel_driver);
    if (verdicts.ok()) {
      continue;
    }
    auto alt = gpu::release_for(gpu::builtin_support(), *i.cuda_major, inv->gpus);
    std::string cuda = std::to_string(*i.cuda_major);
    doctor::Finding f;
    f.code = "gpu-arch-unsupported";
    f.severity = doctor::Severity::error;
    f.message = "the active cudnnctl generation (" + i.store_entry +
                ") cannot run on every GPU here: " + verdicts.refusal();
    f.paths = {i.dir};
    f.fix = alt ? "cudnnctl install " + *alt + " --cuda " + cuda +
                      " (the newest release with device code for every GPU here), or `cudnnctl "
                      "rollback` to an earlier generation"
                : "`cudnnctl rollback` to an earlier generation, or install a build listed in "
                  "manifests/gpu_support.json for these GPUs";
    report.findings.push_back(std::move(f));
  }
}

} // namespace

Status doctor(Context& ctx, const DoctorArgs& args, DoctorResult& out) {
  doctor::DoctorOptions o;
  o.root = ctx.opts().root;
  o.prefix = ctx.layout().sys_prefix().string();
  o.cuda_home = ctx.config().cuda_home;
  o.scan = args.scan;
  for (const auto& s : o.scan) {
    if (s.empty() || s[0] != '/') {
      return fail(ErrorCode::usage,
                  "--scan wants an absolute path inside the root, got \"" + s + "\"");
    }
  }
  o.ld_library_path = env_or_empty("LD_LIBRARY_PATH");
  o.ld_preload = env_or_empty("LD_PRELOAD");
  if (auto conda = env_or_empty("CONDA_PREFIX"); !conda.empty() && conda[0] == '/') {
    o.conda_prefix = conda;
  }
  o.proc_dir = host::proc_dir();
  if (auto tk = host::detect_cuda(ctx.opts().root, ctx.config().cuda_home)) {
    o.cuda = doctor::ToolkitFacts{tk->major, tk->minor, tk->home.string(), tk->source};
  }
  // The site's compat.d rows (what a framework build expects) and its recall lists. Doctor
  // diagnoses broken hosts, so what cannot be used is a finding, not a refusal.
  if (auto compat = doctor::load_compat(ctx.opts().root)) {
    out.compat = std::move(*compat);
    o.compat = &*out.compat;
  } else {
    o.preset.push_back({"compat-overlay-invalid",
                        doctor::Severity::warning,
                        compat.error().message + "; the built-in data is used instead",
                        {"/etc/cudnnctl/compat.d"},
                        "fix or remove the file (row format: docs/COMPAT.md)"});
  }
  if (auto recalls = load_site_recalls(ctx)) {
    out.recalls = std::move(*recalls);
    o.recalls = &*out.recalls;
  } else {
    o.preset.push_back({"recall-lists-refused",
                        doctor::Severity::error,
                        recalls.error().message,
                        {recall::k_recalls_dir},
                        "install current, correctly signed lists (docs/COMPAT.md), or set "
                        "require_signed_recalls = false"});
  }
  TRY_ASSIGN(out.report, doctor::run_doctor(o));
  add_gpus(ctx, *out.report);
  int errors = out.report->count(doctor::Severity::error);
  if (errors > 0) {
    return fail(ErrorCode::problems,
                std::to_string(errors) + " error-level finding(s); each names its fix");
  }
  return {};
}

} // namespace cudnnctl::ops
