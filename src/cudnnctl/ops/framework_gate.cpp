// SPDX-License-Identifier: Apache-2.0
#include "ops/framework_gate.hpp"

#include "doctor/compat.hpp"

#include <cstdlib>

namespace cudnnctl::ops {

doctor::GateTarget serving(const std::string& version) {
  return doctor::GateTarget{doctor::major_of(version), version};
}

std::vector<doctor::GateTarget> serving_nothing(const store::StoreView& view) {
  std::vector<doctor::GateTarget> out;
  for (const auto& a : view.active_slots()) {
    const auto* g = view.generation(a.generation);
    const auto* e = g ? view.entry(g->entry) : nullptr;
    if (e) {
      out.push_back(doctor::GateTarget{doctor::major_of(e->version), std::nullopt});
    }
  }
  return out;
}

doctor::GateInput gate_input(const Context& ctx) {
  doctor::GateInput in;
  in.root = ctx.opts().root;
  in.extra = ctx.config().framework_paths;
  in.extra.insert(in.extra.end(), ctx.opts().scan.begin(), ctx.opts().scan.end());
  const char* conda = std::getenv("CONDA_PREFIX");
  if (conda && conda[0] == '/' && ctx.opts().root == "/") {
    in.conda_prefix = conda;
  }
  if (ctx.opts().platform) {
    in.platform = *ctx.opts().platform;
  } else if (ctx.config().platform) {
    in.platform = *ctx.config().platform;
  }
  return in;
}

Status check_scan_dirs(const std::vector<std::string>& dirs) {
  for (const auto& dir : dirs) {
    if (dir.empty() || dir[0] != '/') {
      return fail(ErrorCode::usage,
                  "--scan wants an absolute path inside the root, got \"" + dir + "\"");
    }
  }
  return {};
}

Status gate_frameworks(Context& ctx, const std::vector<doctor::GateTarget>& targets,
                       const std::string& switching, int cuda, Outcome& out) {
  TRY(check_scan_dirs(ctx.opts().scan));
  doctor::GateInput in = gate_input(ctx);
  in.targets = targets;
  in.cuda_major = cuda;
  TRY_ASSIGN(doctor::Compat compat, doctor::load_compat(ctx.opts().root));
  in.compat = &compat;
  doctor::GateReport report = doctor::evaluate_gate(in);
  out.frameworks = report.frameworks;
  for (const auto& v : report.frameworks) {
    if (ctx.dry_run()) {
      ctx.action("framework gate: " + doctor::describe(v));
    } else {
      ctx.info("framework gate: " + doctor::describe(v), 1);
    }
  }
  if (report.breaking().empty()) {
    return {};
  }
  if (!ctx.opts().force) {
    return fail(ErrorCode::framework_incompatible, doctor::refusal(report, switching, false));
  }
  ctx.warn("--force: " + doctor::refusal(report, switching, true));
  return {};
}

} // namespace cudnnctl::ops
