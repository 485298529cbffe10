// SPDX-License-Identifier: Apache-2.0
#include "ops/doctor.hpp"

#include "doctor/compat.hpp"
#include "doctor/doctor.hpp"
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
  int errors = out.report->count(doctor::Severity::error);
  if (errors > 0) {
    return fail(ErrorCode::problems,
                std::to_string(errors) + " error-level finding(s); each names its fix");
  }
  return {};
}

} // namespace cudnnctl::ops
