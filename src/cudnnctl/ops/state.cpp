// SPDX-License-Identifier: Apache-2.0
#include "ops/state.hpp"

#include "manifest/version.hpp"

namespace cudnnctl::ops {

const store::Generation* StoreView::generation(int n) const {
  for (const auto& g : generations) {
    if (g.number == n) {
      return &g;
    }
  }
  return nullptr;
}

const store::EntryInfo* StoreView::entry(const std::string& name) const {
  for (const auto& e : entries) {
    if (e.name == name) {
      return &e;
    }
  }
  return nullptr;
}

const store::EntryInfo* StoreView::active_entry() const {
  if (!current) {
    return nullptr;
  }
  const auto* g = generation(*current);
  return g ? entry(g->entry) : nullptr;
}

Result<StoreView> read_store(Context& ctx) {
  StoreView view;
  std::vector<std::string> warnings;
  TRY_ASSIGN(view.generations, store::list_generations(ctx.layout(), warnings));
  TRY_ASSIGN(view.entries, store::list_entries(ctx.layout(), warnings));
  TRY_ASSIGN(view.current, store::current_generation(ctx.layout()));
  if (view.current && !view.generation(*view.current)) {
    warnings.push_back("current names generation " + std::to_string(*view.current) +
                       ", which does not exist; run `cudnnctl recover`");
  }
  for (const auto& w : warnings) {
    ctx.warn(w);
  }
  return view;
}

std::optional<GenInfo> gen_info(const Context& ctx, const StoreView& view, std::optional<int> n) {
  if (!n) {
    return std::nullopt;
  }
  const auto* g = view.generation(*n);
  if (!g) {
    return std::nullopt;
  }
  const auto* e = view.entry(g->entry);
  if (!e) {
    return std::nullopt;
  }
  return GenInfo{
      e->version, e->cuda_major, e->platform, g->number, ctx.layout().entry_dir(e->name).string(),
      e->name,    e->origin};
}

Status fill_active(Context& ctx) {
  TRY_ASSIGN(StoreView view, read_store(ctx));
  ctx.report().active = gen_info(ctx, view, view.current);
  ctx.report().previous =
      view.current ? gen_info(ctx, view, store::rollback_target(view.generations, *view.current))
                   : std::nullopt;
  return {};
}

std::vector<const store::EntryInfo*> match_entries(const Context& ctx, const StoreView& view,
                                                   const std::string& version_arg) {
  std::vector<const store::EntryInfo*> out;
  auto wanted = manifest::Version::parse(version_arg);
  if (!wanted) {
    return out;
  }
  for (const auto& e : view.entries) {
    auto v = manifest::Version::parse(e.version);
    bool version_ok = (v && wanted->is_prefix_of(*v)) || e.label == version_arg;
    bool cuda_ok = !ctx.opts().cuda || *ctx.opts().cuda == e.cuda_major;
    bool platform_ok = !ctx.opts().platform || *ctx.opts().platform == e.platform;
    if (version_ok && cuda_ok && platform_ok) {
      out.push_back(&e);
    }
  }
  return out;
}

std::string describe(const store::EntryInfo& e) {
  std::string s = e.version + " (CUDA " + std::to_string(e.cuda_major) + ", " + e.platform;
  if (e.origin != "installed") {
    s += ", " + e.origin;
  }
  return s + ")";
}

} // namespace cudnnctl::ops
