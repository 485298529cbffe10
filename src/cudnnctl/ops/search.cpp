// SPDX-License-Identifier: Apache-2.0
#include "ops/search.hpp"

#include "manifest/pins.hpp"
#include "ops/catalog.hpp"
#include "release/index.hpp"
#include "release/resolve.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace cudnnctl::ops {

namespace {

// `label` is the release's label, `parsed` the same parsed (nullopt when it is not a version).
bool pattern_matches(const manifest::VersionArg& pattern, const std::string& label,
                     const std::optional<manifest::Version>& parsed) {
  if (pattern.text.empty() || pattern.latest()) {
    return true;
  }
  if (pattern.version) {
    return release::partial_matches(pattern, parsed);
  }
  return label.find(pattern.text) != std::string::npos;
}

bool has_build(const release::KnownRelease& r, const std::string& platform,
               std::optional<int> cuda) {
  auto p = r.archives.find(platform);
  return p != r.archives.end() && !p->second.empty() && (!cuda || p->second.contains(*cuda));
}

// The rows of every mirror that can be listed, then the built-in ones, by label. `Gather::newest`:
// stop at the first (descending) label with a build for `platform`/`cuda` (a partial VERSION).
enum class Gather { all, newest };

struct Gathered {
  std::vector<SearchRow> rows;
  std::vector<std::string> listed;
};

Gathered gather(Context& ctx, const manifest::VersionArg& pattern, Gather until,
                const std::string& platform, std::optional<int> cuda) {
  Gathered g;
  release::Sources src = sources(ctx);
  auto row_of = [&](const std::string& label) -> SearchRow* {
    for (auto& r : g.rows) {
      if (r.release.label == label) {
        return &r;
      }
    }
    return nullptr;
  };
  for (const auto& base : src.mirrors) {
    auto labels = release::list_mirror(src, base);
    if (!labels) {
      ctx.warn("cannot list the releases of mirror " + base + ": " + labels.error().full_message());
      continue;
    }
    g.listed.push_back(base);
    for (auto it = labels->rbegin(); it != labels->rend(); ++it) {
      const std::string label = it->str();
      if (!pattern_matches(pattern, label, *it)) {
        continue;
      }
      if (SearchRow* seen = row_of(label)) {
        seen->sources.push_back(base);
        continue;
      }
      auto rel = release::mirror_release(src, ctx.notes(), base, *it);
      if (!rel) {
        ctx.warn("mirror " + base + " lists " + label + ", but: " + rel.error().full_message());
        continue;
      }
      g.rows.push_back(SearchRow{*rel, {base}, false, false});
      if (until == Gather::newest && has_build(*rel, platform, cuda)) {
        return g;
      }
    }
  }
  if (until == Gather::newest && !g.listed.empty()) {
    return g; // the mirrors decide what install can get
  }
  for (const auto& known : builtin_catalog()) {
    if (!pattern_matches(pattern, known.label, known.parsed_label)) {
      continue;
    }
    if (SearchRow* seen = row_of(known.label)) {
      seen->sources.push_back("built-in");
      continue;
    }
    g.rows.push_back(SearchRow{known, {"built-in"}, false, false});
  }
  return g;
}

void sort_rows(std::vector<SearchRow>& rows) {
  std::sort(rows.begin(), rows.end(), [](const SearchRow& a, const SearchRow& b) {
    return a.release.parsed_label.value_or(manifest::Version{}) <
           b.release.parsed_label.value_or(manifest::Version{});
  });
}

} // namespace

Status search(Context& ctx, const std::string& pattern, SearchResult& out) {
  out.pattern = pattern;
  TRY_ASSIGN(release::Target target, release::resolve_target(ctx.layout(), ctx.config(),
                                                             ctx.opts().platform, ctx.opts().cuda));
  out.platform = target.platform;
  out.cuda = target.cuda;
  const manifest::VersionArg arg = manifest::VersionArg::of(pattern); // parsed once, here
  Gathered g = gather(ctx, arg, Gather::all, target.platform, target.cuda);
  out.mirrors_listed = g.listed;
  out.releases = std::move(g.rows);
  sort_rows(out.releases);
  if (pattern == "latest") {
    for (auto it = out.releases.rbegin(); it != out.releases.rend(); ++it) {
      if (has_build(it->release, target.platform, target.cuda)) {
        SearchRow keep = *it;
        out.releases = {keep};
        break;
      }
    }
  }
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  fill_active(ctx, view, out);
  TRY_ASSIGN(manifest::PinSet pins, manifest::load_pins(ctx.layout().pins_dir()));
  const auto* active = view.active_entry();
  for (auto& row : out.releases) {
    const auto& label = row.release.parsed_label;
    row.release.pinned = row.release.pinned || pins.find(row.release.label) != nullptr;
    for (const auto& e : view.entries) {
      const auto& v = e.parsed_version;
      bool same = e.label == row.release.label || e.version == row.release.version ||
                  (label && v && label->parts.size() == 4 && *label == *v);
      if (same) {
        row.installed = true;
        row.active = row.active || (active && active->name == e.name);
      }
    }
  }
  return {};
}

Result<manifest::VersionArg> resolve_partial(Context& ctx, const manifest::VersionArg& version_arg,
                                             const std::string& platform, std::optional<int> cuda) {
  Gathered g = gather(ctx, version_arg, Gather::newest, platform, cuda);
  sort_rows(g.rows);
  for (auto it = g.rows.rbegin(); it != g.rows.rend(); ++it) {
    if (has_build(it->release, platform, cuda)) {
      ctx.info("\"" + version_arg.text + "\" is cuDNN " + it->release.label + " (" +
               it->release.version + "), the newest with a " + platform +
               (cuda ? " CUDA " + std::to_string(*cuda) : std::string()) + " build on " +
               (g.listed.empty() ? "the built-in list" : util::join(g.listed, ", ")));
      return manifest::VersionArg{it->release.label, it->release.parsed_label};
    }
  }
  return fail(ErrorCode::unknown_version,
              "no release matching \"" + version_arg.text + "\" has a " + platform +
                  (cuda ? " CUDA " + std::to_string(*cuda) : std::string()) + " build on " +
                  (g.listed.empty() ? "the built-in list" : util::join(g.listed, ", ")) +
                  " (`cudnnctl search` lists what there is)");
}

} // namespace cudnnctl::ops
