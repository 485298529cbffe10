// SPDX-License-Identifier: Apache-2.0
#include "doctor/recommend.hpp"

#include "doctor/libdir.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

namespace cudnnctl::doctor {

using nlohmann::json;

namespace {

std::string join_ints(const std::vector<int>& v, const char* sep) {
  std::vector<std::string> s;
  for (int i : v) {
    s.push_back(std::to_string(i));
  }
  return util::join(s, sep);
}

// "8.9.2.26" -> "cuDNN 8.x with minor >= 9".
std::string rule_text(const std::string& built) {
  auto parts = util::split(built, '.');
  if (parts.size() < 2) {
    return "cuDNN " + parts[0] + ".x";
  }
  return "cuDNN " + parts[0] + ".x with minor >= " + parts[1];
}

std::string fw_name(const std::pair<std::string, std::string>& f) {
  return f.first + " " + f.second;
}

struct Ranked {
  Candidate c;
  std::tuple<int, int, int, int, int, int> key; // larger is better
};

int workload_score(const WorkloadRow* w, const ReleaseRow& r) {
  if (!w) {
    return 0;
  }
  if (!w->label.empty() && r.label == w->label) {
    return 3;
  }
  if (!w->label.empty() && version3(r.version) == w->label) {
    return 2;
  }
  return compare_versions(r.version, std::to_string(w->major)) >= 0 &&
                 r.version.starts_with(std::to_string(w->major) + ".")
             ? 1
             : 0;
}

int variant_score(const RecommendInput& in, int cuda) {
  if (in.cuda_major || in.driver) {
    return cuda; // the toolkit fixes it; else the newest the driver runs
  }
  return cuda == 12 ? 3 : (cuda == 13 ? 2 : 1);
}

} // namespace

Result<std::pair<std::string, std::string>> parse_framework_spec(std::string_view spec,
                                                                 const Compat& compat) {
  std::string s(util::trim(spec));
  size_t at = s.find("==");
  size_t skip = 2;
  if (at == std::string::npos) {
    at = s.find_first_of("=@");
    skip = 1;
  }
  std::set<std::string> known;
  std::string listing;
  for (const auto& row : compat.frameworks) {
    listing += (listing.empty() ? "" : ", ") + row.framework + " " + row.min +
               (row.min == row.max ? "" : "-" + row.max);
  }
  if (at == std::string::npos || at == 0 || at + skip >= s.size()) {
    return fail(ErrorCode::usage, "--framework wants NAME==VERSION (e.g. torch==2.3.1), got \"" +
                                      s + "\"; known: " + listing);
  }
  std::string name = canonical_framework(s.substr(0, at));
  std::string version(util::trim(s.substr(at + skip)));
  if (!compat.framework(name, version)) {
    return fail(ErrorCode::usage, "no compatibility data for " + name + " " + version +
                                      " (manifests/compat.json knows: " + listing + ")");
  }
  return std::make_pair(name, version);
}

namespace {

// violations() with the framework rows already looked up (nullptr: no data).
std::vector<std::string> violations_with(const ReleaseRow& r, int cuda, const RecommendInput& in,
                                         const Compat& compat,
                                         const std::vector<const FrameworkRow*>& rows) {
  std::vector<std::string> out;
  auto plat = r.platforms.find(in.platform);
  if (plat == r.platforms.end()) {
    out.push_back("no " + in.platform + " build");
    return out;
  }
  if (std::find(plat->second.begin(), plat->second.end(), cuda) == plat->second.end()) {
    out.push_back("no CUDA " + std::to_string(cuda) + " build for " + in.platform);
    return out;
  }
  for (size_t i = 0; i < in.frameworks.size(); ++i) {
    const auto& f = in.frameworks[i];
    const FrameworkRow* row = rows[i];
    if (!row) {
      out.push_back("no compatibility data for " + fw_name(f));
      continue;
    }
    if (!version_rule_ok(row->cudnn, r.version)) {
      out.push_back(fw_name(f) + " needs " + rule_text(row->cudnn) + " (built against " +
                    row->cudnn + ")");
    }
    if (std::find(row->cuda.begin(), row->cuda.end(), cuda) == row->cuda.end()) {
      out.push_back(fw_name(f) + " is built for CUDA " + join_ints(row->cuda, " or ") +
                    ", not CUDA " + std::to_string(cuda));
    }
  }
  if (in.cuda_major && *in.cuda_major != cuda) {
    out.push_back("the CUDA toolkit is " + std::to_string(*in.cuda_major) + " (" + in.cuda_source +
                  "), not CUDA " + std::to_string(cuda));
  }
  if (in.driver) {
    const DriverRow* d = compat.driver_minimum(cuda);
    if (d && compare_versions(*in.driver, d->linux_min) < 0) {
      out.push_back("CUDA " + std::to_string(cuda) + " builds need driver >= " + d->linux_min +
                    ", this one is " + *in.driver);
    }
  }
  if (in.compute_capability) {
    auto ok = compat.supports_cc(r.version, *in.compute_capability);
    if (!ok) {
      out.push_back("no support matrix known for " + r.label + " (compute capability " +
                    *in.compute_capability + " unconfirmed)");
    } else if (!*ok) {
      out.push_back("compute capability " + *in.compute_capability + " is not supported by " +
                    r.label);
    }
  }
  return out;
}

std::vector<const FrameworkRow*> rows_of(const RecommendInput& in, const Compat& compat) {
  std::vector<const FrameworkRow*> rows;
  for (const auto& f : in.frameworks) {
    rows.push_back(compat.framework(f.first, f.second));
  }
  return rows;
}

} // namespace

std::vector<std::string> violations(const ReleaseRow& r, int cuda, const RecommendInput& in,
                                    const Compat& compat) {
  return violations_with(r, cuda, in, compat, rows_of(in, compat));
}

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
  rec.constraints.push_back({"a " + in.platform + " build (this platform)", "host"});
  std::vector<std::string> pins;
  for (const auto& f : in.frameworks) {
    const FrameworkRow* row = compat.framework(f.first, f.second);
    if (!row) {
      return fail(ErrorCode::usage, "no compatibility data for " + fw_name(f));
    }
    rec.constraints.push_back({fw_name(f) + ": " + rule_text(row->cudnn) + " (built against " +
                                   row->cudnn + "), CUDA " + join_ints(row->cuda, " or "),
                               row->source});
    if (util::split(row->cudnn, '.').size() >= 3) {
      pins.push_back(version3(row->cudnn));
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
  if (in.compute_capability) {
    for (const auto& row : compat.compute) {
      rec.constraints.push_back({"compute capability " + *in.compute_capability +
                                     " in the support matrix of cuDNN " + row.cudnn_min +
                                     (row.cudnn_max ? " to " + *row.cudnn_max : " and later"),
                                 row.source});
    }
  }
  rec.constraints.push_back({"a release cudnnctl knows (" + std::to_string(compat.releases.size()) +
                                 " in manifests/releases.json)",
                             "scripts/gen-releases.py over NVIDIA's redistrib manifests"});

  const auto rows = rows_of(in, compat);
  std::vector<Ranked> ok;
  for (const auto& r : compat.releases) {
    std::set<int> cudas;
    for (const auto& [p, c] : r.platforms) {
      cudas.insert(c.begin(), c.end());
    }
    std::vector<std::pair<int, std::vector<std::string>>> per_variant;
    for (int cuda : cudas) {
      auto v = violations_with(r, cuda, in, compat, rows);
      if (!v.empty()) {
        per_variant.emplace_back(cuda, std::move(v));
      } else {
        Candidate c{r.label, r.version, cuda, r.pinned, {}};
        int ws = workload_score(w, r);
        if (w && ws > 0) {
          c.why.push_back(w->why);
        }
        int ps = std::count(pins.begin(), pins.end(), version3(r.version));
        if (ps) {
          c.why.push_back("the exact cuDNN the framework wheel pins");
        }
        if (r.pinned) {
          c.why.push_back("its manifest is pinned in cudnnctl");
        }
        int labels = static_cast<int>(util::split(r.label, '.').size());
        ok.push_back({c, {ws, ps, r.pinned ? 1 : 0, 0, variant_score(in, cuda), -labels}});
      }
    }
    // Reasons every variant shares are said once; the others per CUDA variant.
    std::vector<std::string> reasons;
    for (const auto& [cuda, v] : per_variant) {
      for (const auto& why : v) {
        bool common =
            per_variant.size() == cudas.size() &&
            std::all_of(per_variant.begin(), per_variant.end(), [&](const auto& pv) {
              return std::find(pv.second.begin(), pv.second.end(), why) != pv.second.end();
            });
        std::string s = common ? why : "CUDA " + std::to_string(cuda) + ": " + why;
        if (std::find(reasons.begin(), reasons.end(), s) == reasons.end()) {
          reasons.push_back(s);
        }
      }
    }
    if (cudas.empty()) {
      reasons.push_back("no build for any platform");
    }
    bool any =
        std::any_of(ok.begin(), ok.end(), [&](const Ranked& x) { return x.c.label == r.label; });
    if (!any) {
      rec.rejected.push_back({r.label, r.version, reasons});
    }
  }
  // Newer first within equal soft scores: releases are ascending, so a stable sort on the key
  // with the release index as the 4th component.
  for (size_t i = 0; i < ok.size(); ++i) {
    for (size_t j = 0; j < compat.releases.size(); ++j) {
      if (compat.releases[j].label == ok[i].c.label) {
        std::get<3>(ok[i].key) = static_cast<int>(j);
      }
    }
  }
  std::vector<size_t> order(ok.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ok[a].key > ok[b].key; });
  if (w) {
    rec.preferences.push_back(
        {"workload " + w->name + ": " + w->why +
             (w->label.empty() ? " (newest " + std::to_string(w->major) + ".x)"
                               : " (" + w->label + ")"),
         w->source, !ok.empty() && std::get<0>(ok[order.front()].key) > 0});
  }
  if (!pins.empty()) {
    rec.preferences.push_back(
        {"the exact version the framework wheels pin (" + util::join(pins, ", ") + ")",
         "manifests/compat.json", !ok.empty() && std::get<1>(ok[order.front()].key) > 0});
  }
  rec.preferences.push_back({"a release whose manifest hash is pinned in cudnnctl",
                             "manifests/pins.sha256", !ok.empty() && ok[order.front()].c.pinned});
  rec.preferences.push_back({"the newest release", "manifests/releases.json", true});
  if (!in.cuda_major && !in.driver) {
    rec.preferences.push_back({"CUDA 12 when neither toolkit nor driver is known (CUDA 12 builds "
                               "run on drivers >= 525.60.13; most framework builds use CUDA 12)",
                               "manifests/compat.json",
                               !ok.empty() && ok[order.front()].c.cuda == 12});
  }
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0) {
      rec.recommended = std::move(ok[order[i]].c);
    } else {
      rec.alternatives.push_back(std::move(ok[order[i]].c));
    }
  }
  return rec;
}

json to_json(const Recommendation& rec) {
  auto cand = [](const Candidate& c) {
    return json{{"label", c.label},
                {"version", c.version},
                {"cuda", c.cuda},
                {"pinned", c.pinned},
                {"why", c.why}};
  };
  json alts = json::array(), rej = json::array(), cons = json::array(), prefs = json::array();
  for (const auto& c : rec.alternatives) {
    alts.push_back(cand(c));
  }
  for (const auto& r : rec.rejected) {
    rej.push_back({{"label", r.label}, {"version", r.version}, {"reasons", r.reasons}});
  }
  for (const auto& c : rec.constraints) {
    cons.push_back({{"what", c.what}, {"source", c.source}});
  }
  for (const auto& p : rec.preferences) {
    prefs.push_back({{"what", p.what}, {"source", p.source}, {"met", p.met}});
  }
  return json{{"recommended", rec.recommended ? cand(*rec.recommended) : json(nullptr)},
              {"alternatives", alts},
              {"rejected", rej},
              {"constraints", cons},
              {"preferences", prefs}};
}

std::vector<std::string> render_recommendation(const Recommendation& rec,
                                               const RecommendInput& in) {
  std::vector<std::string> out;
  out.push_back("Hard constraints (a release that violates one is never recommended):");
  for (const auto& c : rec.constraints) {
    out.push_back("  - " + c.what + "  [" + c.source + "]");
  }
  out.push_back("Soft preferences (used only to rank releases that meet every hard constraint):");
  for (const auto& p : rec.preferences) {
    out.push_back("  - " + p.what + (p.met ? "" : "  (not met)") + "  [" + p.source + "]");
  }
  out.push_back("");
  if (rec.recommended) {
    const auto& r = *rec.recommended;
    out.push_back("Recommended: cuDNN " + r.label + " (" + r.version + ") for CUDA " +
                  std::to_string(r.cuda) + " on " + in.platform);
    out.push_back("  install: cudnnctl install " + r.label + " --cuda " + std::to_string(r.cuda));
    for (const auto& w : r.why) {
      out.push_back("  why: " + w);
    }
  } else {
    out.push_back("Recommended: none: no known release meets every hard constraint (see below)");
  }
  out.push_back("");
  out.push_back("Alternatives that also meet every hard constraint (" +
                std::to_string(rec.alternatives.size()) + "):");
  for (const auto& c : rec.alternatives) {
    out.push_back("  " + c.label + " (" + c.version + ") CUDA " + std::to_string(c.cuda) +
                  (c.pinned ? ", pinned" : ""));
  }
  out.push_back("");
  out.push_back("Rejected (" + std::to_string(rec.rejected.size()) + "):");
  for (const auto& r : rec.rejected) {
    out.push_back("  " + r.label + " (" + r.version + "): " + util::join(r.reasons, "; "));
  }
  return out;
}

} // namespace cudnnctl::doctor
