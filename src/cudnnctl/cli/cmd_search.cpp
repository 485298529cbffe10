// SPDX-License-Identifier: Apache-2.0
// `search [PATTERN]` (also `list --available`).
#include "cli/commands.hpp"
#include "ops/catalog.hpp"
#include "ops/search.hpp"
#include "util/strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

namespace cudnnctl::cli {

using nlohmann::json;

namespace {

void render(const ops::SearchResult& r, Report& report) {
  report.outcome = r;
  auto& data = report.data();
  data["pattern"] = r.pattern;
  data["platform"] = r.platform;
  data["cuda"] = r.cuda ? json(*r.cuda) : json(nullptr);
  data["mirrors_listed"] = r.mirrors_listed;
  json releases = json::array();
  size_t other_platform = 0;
  std::string cuda_text = r.cuda ? "CUDA " + std::to_string(*r.cuda) : std::string("any CUDA");
  report.line("releases for " + r.platform + " (" + cuda_text +
              "; sizes are the download; * active, i installed, p pinned):");
  for (const auto& row : r.releases) {
    const auto& rel = row.release;
    json archives = json::array();
    for (const auto& [platform, by_cuda] : rel.archives) {
      for (const auto& [cuda, a] : by_cuda) {
        archives.push_back(
            {{"platform", platform}, {"cuda", cuda}, {"size", a.size}, {"sha256", a.sha256}});
      }
    }
    releases.push_back({{"label", rel.label},
                        {"version", rel.version},
                        {"date", rel.date},
                        {"pinned", rel.pinned},
                        {"installed", row.installed},
                        {"active", row.active},
                        {"sources", row.sources},
                        {"archives", archives}});
    auto here = rel.archives.find(r.platform);
    if (here == rel.archives.end() || here->second.empty()) {
      ++other_platform;
      continue;
    }
    std::vector<std::string> builds;
    for (const auto& [cuda, a] : here->second) {
      builds.push_back("CUDA " + std::to_string(cuda) + " " + util::human_bytes(a.size));
    }
    bool fits = !r.cuda || here->second.contains(*r.cuda);
    std::string marks = std::string(row.active ? "*" : " ") + (row.installed ? "i" : " ") +
                        (rel.pinned ? "p" : " ");
    std::string label = rel.label;
    label.resize(std::max<size_t>(label.size(), 9), ' ');
    std::string version = rel.version;
    version.resize(std::max<size_t>(version.size(), 11), ' ');
    // Where it can come from: a release only the built-in list knows is not on the mirrors
    // listed, and installing it needs a mirror that has it.
    const bool builtin_only = !r.mirrors_listed.empty() &&
                              std::none_of(row.sources.begin(), row.sources.end(),
                                           [](const std::string& s) { return s != "built-in"; });
    report.line(marks + " " + label + " " + version + " " + rel.date + "  " +
                util::join(builds, ", ") + (fits ? "" : "  (no " + cuda_text + " build)") +
                (builtin_only ? "  (not on the mirror)" : ""));
  }
  if (r.releases.empty()) {
    report.line("no release matches \"" + r.pattern + "\"");
  } else if (other_platform > 0) {
    report.line(std::to_string(other_platform) + " more without a " + r.platform +
                " build (--json lists every platform)");
  }
  // How old the built-in list is: a release newer than its newest is found only on a mirror.
  const auto& builtin = ops::builtin_catalog();
  if (!builtin.empty()) {
    const auto newest =
        std::max_element(builtin.begin(), builtin.end(),
                         [](const auto& a, const auto& b) { return a.date < b.date; });
    report.line("built-in list: " + std::to_string(builtin.size()) +
                " releases, made from NVIDIA's redistrib manifests up to " + newest->label +
                " (released " + newest->date + "); newer releases are found on a mirror");
    const auto gaps = release::minor_gaps(builtin);
    if (!gaps.empty()) {
      report.line("  it lacks " + util::join(gaps, ", ") +
                  " (no manifest of theirs was at hand when it was made): a mirror that has "
                  "them lists them");
    }
    data["builtin_list"] = {{"releases", builtin.size()},
                            {"newest", newest->label},
                            {"newest_date", newest->date},
                            {"missing_minors", gaps}};
  }
  if (!r.mirrors_listed.empty()) {
    report.line("(not on the mirror): in cudnnctl's built-in list only; to install one, mirror it "
                "first (`cudnnctl mirror VERSION --to DIR` where NVIDIA's server is reachable)");
  }
  data["releases"] = releases;
}

} // namespace

Status run_search(ops::Context& ctx, const std::string& pattern, Report& report) {
  ops::SearchResult r;
  Status st = ops::search(ctx, pattern, r);
  if (st) {
    render(r, report);
  }
  return st;
}

void register_search(CLI::App& app, Action& action) {
  auto pattern = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "search", "List the releases there are: CUDA variants, platforms, sizes, marks (read-only)");
  cmd->add_option("PATTERN", *pattern,
                  "A version prefix (9, 9.2), latest, or part of a label (default: all)");
  cmd->footer("Releases come from the built-in list and from each mirror's directory index "
              "(redistrib_<label>.json files).\nExample: cudnnctl --mirror "
              "http://mirror.local/cudnn/redist/ search 9");
  on_run(cmd, action, [pattern](ops::Context& ctx, Report& report) {
    return run_search(ctx, *pattern, report);
  });
}

} // namespace cudnnctl::cli
