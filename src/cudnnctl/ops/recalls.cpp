// SPDX-License-Identifier: Apache-2.0
#include "ops/recalls.hpp"

#include "fetch/fetch.hpp"
#include "release/resolve.hpp"
#include "store/generations.hpp"
#include "util/strings.hpp"

namespace cudnnctl::ops {

namespace {

bool is_not_found(const Error& e) {
  return e.code == ErrorCode::usage && e.message.find("not found") != std::string::npos;
}

// The lists a mirror serves: the index from the first base that has one, then each named
// list and its signature from that base. Problems are warnings: the mirror cannot forge a
// recall (the signatures are checked), only withhold one, which `expires` bounds.
std::vector<recall::ListText> fetch_mirror_lists(Context& ctx) {
  std::vector<recall::ListText> out;
  fetch::Options fo = release::fetch_options(sources(ctx));
  fo.url_deadline = std::chrono::seconds(30);
  fo.attempts_per_mirror = 2;
  auto accept_any = [](const std::string&, const std::string&) -> Status { return {}; };
  const std::string dir = std::string(recall::k_mirror_recalls_dir) + "/";
  auto index = fetch::fetch_first(ctx.mirrors(), dir + recall::k_mirror_recalls_index, 64u << 10,
                                  fo, accept_any);
  if (!index) {
    ctx.warn(std::string("recall lists from the mirror not read (recalls_from_mirror = true): ") +
             (is_not_found(index.error())
                  ? "no mirror serves " + dir + recall::k_mirror_recalls_index +
                        " (run `cudnnctl mirror` on the mirror host)"
                  : index.error().message));
    return out;
  }
  const std::string base = index->url.substr(
      0, index->url.size() - dir.size() - std::string(recall::k_mirror_recalls_index).size());
  for (const auto& raw : util::split(index->bytes, '\n')) {
    std::string name(util::trim(raw));
    if (name.empty() || name[0] == '#') {
      continue;
    }
    if (!recall::valid_list_name(name)) {
      ctx.warn("recall index " + index->url + " names \"" + name +
               "\", not a list name (NAME.json); skipped");
      continue;
    }
    auto list = fetch::fetch_first({base}, dir + name, recall::k_max_list_size, fo, accept_any);
    if (!list) {
      ctx.warn("recall list " + fetch::join_url(base, dir + name) +
               " named by the mirror's index not read: " + list.error().message);
      continue;
    }
    recall::ListText t{list->url, std::move(list->bytes), std::nullopt};
    auto sig = fetch::fetch_first({base}, dir + name + ".sig", 4096, fo, accept_any);
    if (sig) {
      t.signature = std::move(sig->bytes);
    } else if (!is_not_found(sig.error())) {
      ctx.warn("recall signature " + fetch::join_url(base, dir + name + ".sig") +
               " not read: " + sig.error().message);
      t.signature = std::string(); // counts as a bad signature, not as no signature
    }
    out.push_back(std::move(t));
  }
  return out;
}

} // namespace

recall::Policy recall_policy(Context& ctx) {
  return {ctx.config().require_signed_recalls, recall::today_utc(),
          ctx.layout().state_dir() / recall::k_kept_lists_dir};
}

Result<recall::RecallSet> load_site_recalls(Context& ctx) {
  std::vector<recall::ListText> extra;
  if (ctx.config().recalls_from_mirror) {
    extra = fetch_mirror_lists(ctx);
  }
  TRY_ASSIGN(recall::RecallSet set,
             recall::load_recalls(ctx.opts().root, recall_policy(ctx), extra));
  for (const auto& w : set.warnings()) {
    ctx.warn(w);
  }
  return set;
}

void remember_recall_lists(Context& ctx, const recall::RecallSet& set) {
  if (ctx.dry_run()) {
    return;
  }
  const auto dir = ctx.layout().state_dir() / recall::k_kept_lists_dir;
  if (Status kept = recall::keep_newest(dir, set); !kept) {
    ctx.warn(
        "recall lists not kept in " + dir.string() +
        " (an older list replayed later would not be noticed): " + kept.error().full_message());
    return;
  }
  for (const auto& n : set.newer()) {
    ctx.info("kept recall list " + n.name + " (serial " + std::to_string(n.serial) + ") in " +
                 dir.string(),
             1);
  }
}

std::string recall_fix(const store::StoreView& view, const store::EntryInfo& active,
                       const recall::RecallSet& recalls) {
  std::string use;
  for (auto it = view.entries.rbegin(); it != view.entries.rend(); ++it) {
    if (it->name != active.name && it->platform == active.platform &&
        !recalls.find_recall(it->version, it->cuda_major)) {
      use = "`cudnnctl use " + it->version + "` (installed, not recalled)";
      break;
    }
  }
  if (use.empty()) {
    use = "`cudnnctl install VERSION` (`cudnnctl recommend` skips recalled releases)";
  }
  std::string fix = "switch to another release: " + use;
  if (view.current && store::rollback_target(view.generations, *view.current)) {
    fix += " or `cudnnctl rollback`";
  }
  return fix;
}

} // namespace cudnnctl::ops
