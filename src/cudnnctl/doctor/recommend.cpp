// SPDX-License-Identifier: Apache-2.0
// recommend(): one release if one serves everything, else a set of slots, else the conflict;
// then the rejections grouped by reason, the recalled builds, what pip installs bring, the
// workload hint with the guide's claims checked against the data, and the constraints used.
#include "doctor/recommend_impl.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace cudnnctl::doctor {

using namespace detail;

namespace {

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) {
    v.push_back(s);
  }
}

// All reasons of `r` (per CUDA variant where they differ), its one-line summary and kind.
Rejection reject(const ReleaseRow& r, const RecommendInput& in, const Compat& compat) {
  Rejection rej{r.label, r.version, {}, "", ""};
  const Active all = all_active(in);
  std::vector<std::pair<int, std::vector<Violation>>> per;
  for (int cuda : cudas_of(r)) {
    per.emplace_back(cuda, evaluate(r, cuda, in, compat, all));
  }
  for (const auto& [cuda, v] : per) {
    for (const auto& x : v) {
      bool common = std::all_of(per.begin(), per.end(), [&](const auto& o) {
        return std::any_of(o.second.begin(), o.second.end(),
                           [&](const Violation& y) { return y.text == x.text; });
      });
      add_unique(rej.reasons, common ? x.text : "CUDA " + std::to_string(cuda) + ": " + x.text);
    }
  }
  if (per.empty()) {
    rej.reasons.push_back("no build for any platform");
  }
  auto plat = r.platforms.find(in.platform);
  if (plat == r.platforms.end()) {
    rej.summary = "no " + in.platform + " build";
    rej.kind = "platform";
    return rej;
  }
  const auto& here = plat->second;
  if (in.cuda_major && std::find(here.begin(), here.end(), *in.cuda_major) == here.end()) {
    rej.summary = "no CUDA " + std::to_string(*in.cuda_major) + " build";
    rej.kind = "toolkit";
    return rej;
  }
  std::vector<int> considered = in.cuda_major ? std::vector<int>{*in.cuda_major} : here;
  std::vector<std::vector<Violation>> vs;
  for (int cuda : considered) {
    auto v = evaluate(r, cuda, in, compat, all);
    std::erase_if(v, [](const Violation& x) { return x.kind == "toolkit"; });
    vs.push_back(std::move(v));
  }
  std::vector<std::string> common;
  for (const auto& x : vs.front()) {
    bool everywhere = std::all_of(vs.begin(), vs.end(), [&](const auto& o) {
      return std::any_of(o.begin(), o.end(), [&](const Violation& y) { return y.text == x.text; });
    });
    if (everywhere) {
      common.push_back(x.text);
      rej.kind = rej.kind.empty() ? x.kind : rej.kind;
    }
  }
  if (common.empty() && vs.size() > 1) {
    // Variants the framework has no build for say nothing about the release: leave them out
    // when the others agree ("needs cuDNN 8.x, not 9.x" for 9.12's CUDA 12 and 13 builds).
    std::vector<const std::vector<Violation>*> telling;
    for (const auto& v : vs) {
      bool only_cuda = std::all_of(v.begin(), v.end(),
                                   [](const Violation& x) { return x.kind == "framework-cuda"; });
      if (!only_cuda) {
        telling.push_back(&v);
      }
    }
    for (const auto& x : telling.empty() ? std::vector<Violation>{} : *telling.front()) {
      bool everywhere = std::all_of(telling.begin(), telling.end(), [&](const auto* o) {
        return std::any_of(o->begin(), o->end(),
                           [&](const Violation& y) { return y.text == x.text; });
      });
      if (everywhere) {
        common.push_back(x.text);
        rej.kind = rej.kind.empty() ? x.kind : rej.kind;
      }
    }
  }
  if (!common.empty()) {
    rej.summary = util::join(common, "; ");
    return rej;
  }
  std::vector<std::string> parts;
  for (size_t i = 0; i < considered.size(); ++i) {
    if (!vs[i].empty()) {
      parts.push_back("CUDA " + std::to_string(considered[i]) + ": " + vs[i].front().text);
      rej.kind = rej.kind.empty() ? vs[i].front().kind : rej.kind;
    }
  }
  rej.summary = util::join(parts, "; ");
  return rej;
}

std::string toolkit_hint(const std::vector<const ReleaseRow*>& releases, const RecommendInput& in,
                         const Compat& compat) {
  std::map<int, int> count;
  for (const auto* r : releases) {
    auto p = r->platforms.find(in.platform);
    for (int c : p == r->platforms.end() ? std::vector<int>{} : p->second) {
      count[c]++;
    }
  }
  std::vector<std::pair<int, int>> by(count.begin(), count.end());
  std::stable_sort(by.begin(), by.end(), [](auto a, auto b) { return a.second > b.second; });
  for (const auto& [m, n] : by) {
    RecommendInput other = in;
    other.cuda_major = m;
    if (solvable(other, compat, all_active(other))) {
      return "try --cuda " + std::to_string(m) + " with a CUDA " + std::to_string(m) + " toolkit";
    }
  }
  return by.empty() ? "" : "they are built for CUDA " + std::to_string(by.front().first);
}

void add_rejections(Recommendation& rec, const RecommendInput& in, const Compat& compat,
                    const std::vector<std::vector<size_t>>& groups) {
  std::vector<std::pair<const ReleaseRow*, Rejection>> rejected;
  for (const auto& r : compat.releases) {
    bool usable = false;
    for (const auto& g : groups) {
      Active a = all_active(in);
      a.needs = g;
      for (int cuda : cudas_of(r)) {
        usable = usable || evaluate(r, cuda, in, compat, a).empty();
      }
    }
    if (!usable) {
      rejected.emplace_back(&r, reject(r, in, compat));
    }
  }
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> by_summary;
  for (size_t i = 0; i < rejected.size(); ++i) {
    const auto& s = rejected[i].second.summary;
    if (!by_summary.count(s)) {
      order.push_back(s);
    }
    by_summary[s].push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return by_summary[a].size() > by_summary[b].size();
  });
  for (const auto& s : order) {
    RejectionGroup g{s, "", rejected[by_summary[s].front()].second.kind, {}};
    std::vector<const ReleaseRow*> rows;
    for (size_t i : by_summary[s]) {
      g.labels.push_back(rejected[i].second.label);
      rows.push_back(rejected[i].first);
    }
    if (g.kind == "toolkit") {
      g.hint = toolkit_hint(rows, in, compat);
    } else if (g.kind == "driver") {
      g.hint = "update the driver, or use builds for an older CUDA major";
    }
    rec.groups.push_back(std::move(g));
  }
  for (auto& [r, rej] : rejected) {
    rec.rejected.push_back(std::move(rej));
  }
}

void add_recalled(Recommendation& rec, const RecommendInput& in, const Compat& compat) {
  if (!in.recalls) {
    return;
  }
  for (const auto& r : compat.releases) {
    auto p = r.platforms.find(in.platform);
    for (int cuda : p == r.platforms.end() ? std::vector<int>{} : p->second) {
      if (const auto* hit = in.recalls->find_recall(r.version, cuda)) {
        rec.recalled.push_back({r.label, r.version, cuda, hit->reason, hit->url, hit->list});
      }
    }
  }
}

void add_bundles(Recommendation& rec, const RecommendInput& in) {
  for (const auto& n : in.frameworks) {
    BundleNote b;
    b.framework = n.label();
    b.bundled = n.bundles();
    b.system_for = n.info->system_for;
    b.source = n.info->bundle_source;
    std::string pin;
    if (n.rows.size() == 1) {
      const BuildVariant* v = n.rows.front()->pypi_variant();
      for (const auto& x : n.rows.front()->variants) {
        v = n.req.local && x.wheel == *n.req.local ? &x : v;
      }
      pin = v ? v->pip : "";
    }
    std::string extras = n.req.extras.empty() ? "" : " [" + util::join(n.req.extras, ",") + "]";
    b.text = b.bundled ? b.framework + extras + " installed with pip brings its own cuDNN" +
                             (pin.empty() ? "" : " (" + pin + ")") + ": " + n.info->bundle_text
                       : b.framework + extras + ": " + n.info->bundle_text;
    rec.bundles.push_back(std::move(b));
    for (const auto* row : n.rows) {
      add_unique(rec.notes, row->note.empty() ? "" : n.label() + ": " + row->note);
    }
  }
}

ClaimCheck check_claim(const Claim& claim, const RecommendInput& in, const Compat& compat) {
  ClaimCheck c{claim.text, "not measured by cudnnctl (no benchmark data ships with it)",
               "not measured"};
  if (claim.sizes.size() != 2 || !claim.percent) {
    return c;
  }
  const ReleaseRow* a = compat.release(claim.sizes[0]);
  const ReleaseRow* b = compat.release(claim.sizes[1]);
  std::string platform = in.platform;
  int cuda = in.cuda_major.value_or(12);
  auto sizes = [&](const std::string& p, int cu) {
    const Archive* x = a ? a->archive(p, cu) : nullptr;
    const Archive* y = b ? b->archive(p, cu) : nullptr;
    return std::make_pair(x, y);
  };
  auto found = sizes(platform, cuda);
  if (!found.first || !found.second) {
    platform = "linux-x86_64";
    cuda = 12;
    found = sizes(platform, cuda);
  }
  const Archive* x = found.first;
  const Archive* y = found.second;
  if (!x || !y) {
    c.data = "the manifests cudnnctl knows have no common build of " + claim.sizes[0] + " and " +
             claim.sizes[1] + " to compare";
    return c;
  }
  double pct = (static_cast<double>(x->size) - static_cast<double>(y->size)) /
               static_cast<double>(y->size) * 100.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", std::fabs(pct));
  c.data = "the manifests: " + claim.sizes[0] + "'s CUDA " + std::to_string(cuda) +
           " archive for " + platform + " is " + size_text(x->size) + ", " + claim.sizes[1] +
           "'s " + size_text(y->size) + ": " + claim.sizes[0] + " is " + buf + " % " +
           (pct >= 0 ? "larger" : "smaller");
  if ((pct >= 0) != (*claim.percent >= 0)) {
    c.verdict = "the reverse of the claim";
  } else {
    c.verdict = std::fabs(pct - *claim.percent) <= 5.0 ? "agrees" : "differs";
  }
  return c;
}

void add_hint(Recommendation& rec, const RecommendInput& in, const Compat& compat,
              const WorkloadRow* w) {
  if (!w) {
    return;
  }
  WorkloadHint h{w->name, w->guide, w->source, false, {}};
  const Candidate* top = rec.recommended();
  h.ranked = top && std::any_of(top->why.begin(), top->why.end(), [](const std::string& s) {
               return s.starts_with("hint for --workload");
             });
  for (const auto& claim : w->claims) {
    h.claims.push_back(check_claim(claim, in, compat));
  }
  rec.hint = std::move(h);
}

void add_constraints(Recommendation& rec, const RecommendInput& in, const Compat& compat) {
  rec.constraints.push_back({"a " + in.platform + " build (this platform)", "host"});
  std::set<std::string> rules_seen;
  for (const auto& n : in.frameworks) {
    // "cu118, cu121: cuDNN 9.x with minor >= 1 (9.1.0.70)": builds with one rule together.
    std::vector<std::string> rules, sources;
    std::map<std::string, std::vector<std::string>> tags;
    for (const auto& b : n.builds()) {
      const BuildVariant& v = *b.variant;
      std::string rule = b.check == Check::optional
                             ? "cuDNN optional"
                             : rule_text(v.cudnn, b.check) + " (" + v.cudnn + ")";
      add_unique(rules, rule);
      add_unique(tags[rule], v.wheel.empty() ? "CUDA " + v.cuda : v.wheel);
      add_unique(sources,
                 b.row->source + (b.row->origin == "built-in" ? "" : " [" + b.row->origin + "]"));
    }
    std::vector<std::string> builds;
    for (const auto& rule : rules) {
      builds.push_back(util::join(tags[rule], ", ") + ": " + rule);
    }
    rec.constraints.push_back(
        {n.label() + " builds: " + util::join(builds, "; "), util::join(sources, " | ")});
    if (rules_seen.insert(n.info->name).second) {
      rec.constraints.push_back(
          {n.info->display + ": " + n.info->check_text, n.info->check_source});
    }
  }
  if (!in.frameworks.empty()) {
    rec.constraints.push_back(
        {"the version rule: same major, runtime minor >= built minor", compat.version_rule_source});
  }
  if (in.cuda_major) {
    rec.constraints.push_back(
        {"the build's CUDA major must be the toolkit's: " + std::to_string(*in.cuda_major),
         in.cuda_source});
  }
  if (in.driver) {
    for (const auto& d : compat.drivers) {
      rec.constraints.push_back({"CUDA " + std::to_string(d.cuda_major) +
                                     " builds need driver >= " + d.linux_min +
                                     " (installed: " + *in.driver + ")",
                                 d.source});
    }
  }
  if (!judged_gpus(in).empty()) {
    for (const auto& row : gpu::builtin_support().rows) {
      rec.constraints.push_back(
          {"compute capability " + in.compute_capability.value_or("?") + " (" + in.gpus_source +
               ") against the device code of cuDNN " + row.cudnn_min +
               (row.cudnn_max ? " to " + *row.cudnn_max : " and later") + " for CUDA " +
               std::to_string(row.cuda) + " (" + util::join(row.compute_capabilities, ", ") + ")",
           row.source});
    }
  }
  if (in.recalls && !in.recalls->recalls().empty()) {
    rec.constraints.push_back({"not recalled (" + std::to_string(in.recalls->recalls().size()) +
                                   " recall(s) in signed lists)",
                               "/etc/cudnnctl/recalls.d"});
  }
  if (in.require_pin) {
    rec.constraints.push_back(
        {"a pinned manifest (--require-pin)", "manifests/pins.sha256 and /etc/cudnnctl/pins.d"});
  }
  rec.constraints.push_back({"a release cudnnctl knows (" + std::to_string(compat.releases.size()) +
                                 " in manifests/releases.json)",
                             "scripts/gen-releases.py over NVIDIA's redistrib manifests"});
}

void add_preferences(Recommendation& rec, const RecommendInput& in, const WorkloadRow* w) {
  const Candidate* top = rec.recommended();
  auto has = [&](const char* prefix) {
    return top && std::any_of(top->why.begin(), top->why.end(),
                              [&](const std::string& s) { return s.starts_with(prefix); });
  };
  if (w) {
    rec.preferences.push_back(
        {"hint for --workload " + w->name + ": " + w->guide +
             (w->label.empty() ? " (newest " + std::to_string(w->major) + ".x)"
                               : " (" + w->label + ")"),
         w->source, has("hint for --workload")});
  }
  if (!in.frameworks.empty()) {
    rec.preferences.push_back({"the exact cuDNN a framework build was made with",
                               "manifests/compat.json", has("the exact cuDNN")});
  }
  rec.preferences.push_back(
      {"the newest release", "manifests/releases.json", has("the newest release")});
  if (!in.cuda_major && !in.driver) {
    rec.preferences.push_back({"CUDA 12 when neither toolkit nor driver is known (CUDA 12 builds "
                               "run on drivers >= 525.60.13; most framework builds use CUDA 12)",
                               "manifests/compat.json", top && top->cuda == 12});
  }
  rec.preferences.push_back({"of the labels of one archive, a pinned one (8.9.7.29 for 8.9.7's "
                             "CUDA 12 archive)",
                             "manifests/pins.sha256", top && top->pinned});
}

} // namespace

Result<Recommendation> recommend(const RecommendInput& in, const Compat& compat) {
  Recommendation rec;
  const WorkloadRow* w = nullptr;
  if (in.workload) {
    w = compat.workload(*in.workload);
    if (!w) {
      std::vector<std::string> names;
      for (const auto& row : compat.workloads) {
        names.push_back(row.name + " (" + util::join(row.aliases, ", ") + ")");
      }
      return fail(ErrorCode::usage,
                  "unknown workload \"" + *in.workload + "\"; known: " + util::join(names, "; "));
    }
  }
  add_constraints(rec, in, compat);
  add_bundles(rec, in);
  const Active all = all_active(in);
  std::vector<std::vector<size_t>> groups;
  auto pairs = feasible(in, compat, all);
  if (!pairs.empty()) {
    auto cands = rank(pairs, in, compat, all.needs);
    Slot s;
    s.cudnn_major = major_of(cands.front().version);
    s.cuda = cands.front().cuda;
    s.chosen = cands.front();
    for (const auto& n : in.frameworks) {
      s.frameworks.push_back(n.label());
    }
    rec.alternatives.assign(cands.begin() + 1, cands.end());
    rec.slots.push_back(std::move(s));
    groups.push_back(all.needs);
  } else if (in.frameworks.size() > 1) {
    if (auto set = solve_sets(in, compat, all)) {
      rec.slots = std::move(set->slots);
      groups = std::move(set->groups);
    }
  }
  if (rec.slots.empty()) {
    rec.conflict = explain_conflict(in, compat);
  }
  for (size_t i = 0; i < rec.slots.size(); ++i) {
    auto& s = rec.slots[i];
    s.command = "cudnnctl install " + s.chosen.label + " --cuda " + std::to_string(s.chosen.cuda) +
                (i ? " --alongside" : "");
  }
  add_rejections(rec, in, compat, groups);
  add_recalled(rec, in, compat);
  add_hint(rec, in, compat, w);
  add_preferences(rec, in, w);
  return rec;
}

} // namespace cudnnctl::doctor
