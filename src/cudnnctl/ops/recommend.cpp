// SPDX-License-Identifier: Apache-2.0
#include "ops/recommend.hpp"

#include "doctor/compat.hpp"
#include "doctor/framework_gate.hpp"
#include "doctor/hostfacts.hpp"
#include "doctor/ldconf.hpp"
#include "doctor/recommend.hpp"
#include "gpu/inventory.hpp"
#include "host/host.hpp"
#include "host/inuse.hpp"
#include "manifest/pins.hpp"
#include "ops/framework_gate.hpp"
#include "ops/recalls.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace cudnnctl::ops {

Status recommend(Context& ctx, const RecommendArgs& args, RecommendResult& out) {
  const std::string& root = ctx.opts().root;
  TRY_ASSIGN(out.compat, doctor::load_compat(root));
  const doctor::Compat& compat = out.compat;
  doctor::RecommendInput& in = out.input;
  for (const auto& spec : args.frameworks) {
    TRY_ASSIGN(auto need, doctor::resolve_framework(spec, compat));
    in.frameworks.push_back(std::move(need));
  }
  if (args.frameworks.empty()) {
    // The frameworks found on the node that load the system's cuDNN (those with their own
    // copy are not served by it), as the framework gate finds them.
    doctor::RootFs rootfs(root);
    std::string multiarch = doctor::machine_multiarch();
    for (const auto& f : doctor::node_frameworks(rootfs, gate_input(ctx), compat)) {
      if (f.version.empty() || doctor::own_cudnn_copy(rootfs, f, multiarch)) {
        continue;
      }
      std::string spec = f.kind + "==" + f.version.substr(0, f.version.find('+'));
      if (std::find(out.from_node.begin(), out.from_node.end(), spec) != out.from_node.end()) {
        continue;
      }
      auto need = doctor::resolve_framework(spec, compat);
      if (!need) {
        ctx.info(spec + " at " + f.site + " not used: " + need.error().message, 1);
        continue;
      }
      out.from_node.push_back(spec);
      in.frameworks.push_back(std::move(*need));
    }
  }
  in.workload = args.workload;
  if (args.compute_capability) {
    auto parts = util::split(*args.compute_capability, '.');
    if (parts.size() != 2 || !util::parse_u64(parts[0]) || !util::parse_u64(parts[1])) {
      return fail(ErrorCode::usage, "--compute-capability wants MAJOR.MINOR (e.g. 9.0), got \"" +
                                        *args.compute_capability + "\"");
    }
    in.compute_capability = *args.compute_capability;
    in.gpus = {gpu::GpuFacts{0, "", *args.compute_capability}};
    in.gpus_source = "--compute-capability";
  } else if (auto inv =
                 gpu::inventory(std::chrono::seconds(std::max(1, ctx.config().smoke_timeout)))) {
    // The node's own GPUs by default (issue 17); none visible: no constraint.
    std::vector<std::string> ccs;
    for (const auto& g : inv->gpus) {
      if (!g.compute_capability.empty() &&
          std::find(ccs.begin(), ccs.end(), g.compute_capability) == ccs.end()) {
        ccs.push_back(g.compute_capability);
      }
    }
    if (!inv->gpus.empty()) {
      in.gpus = inv->gpus;
      in.compute_capability = util::join(ccs, ", ");
      in.gpus_source =
          "the node's " + std::to_string(inv->gpus.size()) + " GPU(s), cudnnctl-smoke --gpus";
    } else {
      ctx.info("no GPU visible (" + inv->report.message + "): no compute-capability constraint", 1);
    }
  } else {
    ctx.warn("the node's GPUs not read: " + inv.error().message +
             " (pass --compute-capability to constrain by GPU)");
  }
  if (ctx.opts().cuda) {
    in.cuda_major = *ctx.opts().cuda;
    in.cuda_source = "--cuda";
  } else if (ctx.config().cuda) {
    in.cuda_major = *ctx.config().cuda;
    in.cuda_source = "cuda in /etc/cudnnctl/config.toml";
  } else if (auto tk = host::detect_cuda(root, ctx.config().cuda_home)) {
    in.cuda_major = tk->major;
    in.cuda_source = "the toolkit at " + tk->home.string() + ", from " + tk->source;
  }
  if (auto text = util::read_file(host::proc_dir() / "driver/nvidia/version", 1u << 16)) {
    if (auto b = doctor::parse_driver_banner(*text)) {
      in.driver = b->version;
    }
  }
  if (ctx.opts().platform) {
    in.platform = *ctx.opts().platform;
  } else if (ctx.config().platform) {
    in.platform = *ctx.config().platform;
  } else {
    TRY_ASSIGN(in.platform, host::host_platform());
  }
  in.require_pin = ctx.require_pin();
  if (auto pins = manifest::load_pins(ctx.layout().pins_dir())) {
    in.site_pinned = pins->labels();
  } else {
    ctx.warn("site pins not read: " + pins.error().message);
  }
  TRY_ASSIGN(out.recalls, load_site_recalls(ctx));
  in.recalls = &out.recalls;
  TRY_ASSIGN(out.recommendation, doctor::recommend(in, compat));
  if (out.recommendation->slots.empty()) {
    const auto& c = out.recommendation->conflict.value_or(doctor::Conflict{});
    return fail(ErrorCode::requirement,
                c.message + (c.hint.empty() ? "" : "; " + c.hint) + " (each rejection says why)");
  }
  return {};
}

} // namespace cudnnctl::ops
