// SPDX-License-Identifier: Apache-2.0
#include "ops/recommend.hpp"

#include "doctor/compat.hpp"
#include "doctor/hostfacts.hpp"
#include "doctor/recommend.hpp"
#include "host/host.hpp"
#include "manifest/pins.hpp"
#include "ops/inuse.hpp"
#include "recall/recall.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <nlohmann/json.hpp>

namespace cudnnctl::ops {

namespace {

nlohmann::json recall_lists_json(const recall::RecallSet& set) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& l : set.lists()) {
    out.push_back({{"path", l.path},
                   {"state", recall::state_name(l.state)},
                   {"message", l.message},
                   {"expires", l.expires ? nlohmann::json(*l.expires) : nlohmann::json(nullptr)},
                   {"recalls", l.recalls}});
  }
  return out;
}

} // namespace

Status recommend(Context& ctx, const RecommendArgs& args) {
  const std::string& root = ctx.opts().root;
  TRY_ASSIGN(const doctor::Compat compat, doctor::load_compat(root));
  doctor::RecommendInput in;
  for (const auto& spec : args.frameworks) {
    TRY_ASSIGN(auto need, doctor::resolve_framework(spec, compat));
    in.frameworks.push_back(std::move(need));
  }
  in.workload = args.workload;
  if (args.compute_capability) {
    auto parts = util::split(*args.compute_capability, '.');
    if (parts.size() != 2 || !util::parse_u64(parts[0]) || !util::parse_u64(parts[1])) {
      return fail(ErrorCode::usage, "--compute-capability wants MAJOR.MINOR (e.g. 9.0), got \"" +
                                        *args.compute_capability + "\"");
    }
    in.compute_capability = *args.compute_capability;
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
  if (auto text = util::read_file(proc_dir() / "driver/nvidia/version", 1u << 16)) {
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
  if (auto pins = manifest::load_pins(util::under_root(root, "/etc/cudnnctl/pins.d"))) {
    in.site_pinned = pins->labels();
  } else {
    ctx.warn("site pins not read: " + pins.error().message);
  }
  recall::Policy policy{ctx.config().require_signed_recalls, recall::today_utc()};
  TRY_ASSIGN(const recall::RecallSet recalls, recall::load_recalls(root, policy));
  for (const auto& w : recalls.warnings()) {
    ctx.warn(w);
  }
  in.recalls = &recalls;

  TRY_ASSIGN(doctor::Recommendation rec, doctor::recommend(in, compat));
  nlohmann::json data = doctor::to_json(rec, in);
  nlohmann::json fws = nlohmann::json::array();
  for (const auto& f : in.frameworks) {
    fws.push_back(
        {{"name", f.info->name},
         {"spec", f.req.text},
         {"versions", f.req.versions.describe()},
         {"version", f.req.exact ? nlohmann::json(*f.req.exact) : nlohmann::json(nullptr)},
         {"extras", f.req.extras}});
  }
  data["input"] = {
      {"frameworks", fws},
      {"workload", in.workload ? nlohmann::json(*in.workload) : nlohmann::json(nullptr)},
      {"cuda", in.cuda_major ? nlohmann::json(*in.cuda_major) : nlohmann::json(nullptr)},
      {"cuda_source", in.cuda_source},
      {"driver", in.driver ? nlohmann::json(*in.driver) : nlohmann::json(nullptr)},
      {"compute_capability",
       in.compute_capability ? nlohmann::json(*in.compute_capability) : nlohmann::json(nullptr)},
      {"platform", in.platform},
      {"require_pin", in.require_pin},
      {"compat_overlays", compat.overlays}};
  data["recall_lists"] = recall_lists_json(recalls);
  ctx.report().data = std::move(data);
  for (auto& line : doctor::render_recommendation(rec, in)) {
    ctx.line(line);
  }
  if (rec.slots.empty()) {
    const auto& c = rec.conflict.value_or(doctor::Conflict{});
    return fail(ErrorCode::requirement,
                c.message + (c.hint.empty() ? "" : "; " + c.hint) + " (each rejection says why)");
  }
  return {};
}

} // namespace cudnnctl::ops
