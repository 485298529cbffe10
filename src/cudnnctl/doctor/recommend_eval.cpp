// SPDX-License-Identifier: Apache-2.0
// Resolving --framework, checking one (release, CUDA variant) against the hard constraints,
// and ranking what passes.
#include "doctor/libdir.hpp"
#include "doctor/recommend_impl.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace cudnnctl::doctor {

namespace {

std::string known_listing(const Compat& compat) {
  std::vector<std::string> out;
  for (const auto& f : compat.frameworks) {
    out.push_back(f.name + " " + compat.known_versions(f.name).describe());
  }
  return util::join(out, "; ");
}

const char* const k_add_rows = "a site adds rows in /etc/cudnnctl/compat.d/ (docs/COMPAT.md)";

} // namespace

std::string FrameworkNeed::label() const {
  std::string name = info ? info->name : req.name;
  if (req.exact) {
    return name + " " + *req.exact + (req.local ? "+" + *req.local : "");
  }
  return name + req.spec;
}

bool FrameworkNeed::bundles() const {
  if (!info) {
    return false;
  }
  if (!info->bundle_extras) {
    return true;
  }
  for (const auto& e : req.extras) {
    if (std::find(info->bundle_extras->begin(), info->bundle_extras->end(), e) !=
        info->bundle_extras->end()) {
      return true;
    }
  }
  return false;
}

std::vector<UsableBuild> FrameworkNeed::builds() const {
  std::vector<UsableBuild> out;
  for (const auto* row : rows) {
    for (const auto& v : row->variants) {
      if (!req.local || v.wheel == *req.local) {
        out.push_back({row, &v, row->check.value_or(info->check)});
      }
    }
  }
  return out;
}

Result<FrameworkNeed> resolve_framework(std::string_view spec, const Compat& compat) {
  TRY_ASSIGN(Requirement req, parse_requirement(spec));
  FrameworkNeed need;
  need.info = compat.framework_info(req.name);
  if (!need.info) {
    std::vector<std::string> names;
    for (const auto& f : compat.frameworks) {
      names.push_back(f.name);
    }
    return fail(ErrorCode::usage, "--framework '" + req.text + "': no compatibility data for " +
                                      req.name + " (known: " + util::join(names, ", ") + "; " +
                                      k_add_rows + ")");
  }
  need.rows = compat.builds_for(need.info->name, req.versions);
  if (need.rows.empty()) {
    return fail(ErrorCode::usage, "--framework '" + req.text + "': no compatibility data for " +
                                      need.info->name + " " + req.versions.describe() +
                                      " (known: " + known_listing(compat) + "; " + k_add_rows +
                                      ")");
  }
  if (req.local) {
    bool any = false;
    std::set<std::string> tags;
    for (const auto* row : need.rows) {
      for (const auto& v : row->variants) {
        any = any || v.wheel == *req.local;
        if (!v.wheel.empty()) {
          tags.insert(v.wheel);
        }
      }
    }
    if (!any) {
      return fail(
          ErrorCode::usage,
          "--framework '" + req.text + "': no " + need.info->name + " build tagged +" + *req.local +
              " in the data (tags: " +
              (tags.empty() ? std::string("none") : util::join({tags.begin(), tags.end()}, ", ")) +
              ")");
    }
  }
  need.req = std::move(req);
  return need;
}

namespace detail {

std::string rule_text(const std::string& cudnn, Check check) {
  auto parts = util::split(cudnn, '.');
  if (check == Check::major || parts.size() < 2) {
    return "cuDNN " + parts[0] + ".x";
  }
  return "cuDNN " + parts[0] + ".x with minor >= " + parts[1];
}

std::string cuda_list(const std::vector<int>& cudas) {
  std::vector<std::string> s;
  for (int c : cudas) {
    s.push_back(std::to_string(c));
  }
  return "CUDA " + util::join(s, " or ");
}

std::vector<int> cudas_of(const ReleaseRow& r) {
  std::set<int> all;
  for (const auto& [p, c] : r.platforms) {
    all.insert(c.begin(), c.end());
  }
  return {all.begin(), all.end()};
}

Active all_active(const RecommendInput& in) {
  Active a;
  for (size_t i = 0; i < in.frameworks.size(); ++i) {
    a.needs.push_back(i);
  }
  return a;
}

namespace {

bool pinned(const ReleaseRow& r, const RecommendInput& in) {
  return r.pinned ||
         std::find(in.site_pinned.begin(), in.site_pinned.end(), r.label) != in.site_pinned.end();
}

bool variant_ok(const BuildVariant& v, Check check, const std::string& version) {
  return check_accepts(check, v.cudnn, version);
}

// Why `need` cannot use release `r` for CUDA `cuda`; nullopt when it can.
std::optional<Violation> framework_violation(const FrameworkNeed& need, const ReleaseRow& r,
                                             int cuda) {
  std::vector<std::string> rules;
  std::set<int> cudas, majors;
  bool any_cuda = false;
  for (const auto& b : need.builds()) {
    if (b.check == Check::optional) {
      return std::nullopt; // cuDNN is not needed: no constraint at all
    }
    const BuildVariant& v = *b.variant;
    cudas.insert(v.cuda_major);
    if (v.cuda_major != cuda) {
      continue;
    }
    any_cuda = true;
    majors.insert(major_of(v.cudnn));
    if (variant_ok(v, b.check, r.version)) {
      return std::nullopt;
    }
    std::string rule = rule_text(v.cudnn, b.check);
    if (util::split(v.cudnn, '.').size() > 1) {
      rule += " (built against " + v.cudnn + ")";
    }
    if (std::find(rules.begin(), rules.end(), rule) == rules.end()) {
      rules.push_back(rule);
    }
  }
  if (!any_cuda) {
    return Violation{"framework-cuda",
                     need.label() + " has no CUDA " + std::to_string(cuda) +
                         " build (its builds: " + cuda_list({cudas.begin(), cudas.end()}) + ")"};
  }
  if (majors.count(major_of(r.version)) == 0) {
    // Another major altogether: say so without the per-build detail, so that every CUDA
    // variant of the release gives the same reason (and the release one group).
    std::vector<std::string> m;
    for (int x : majors) {
      m.push_back(std::to_string(x) + ".x");
    }
    return Violation{"framework", need.label() + " needs cuDNN " + util::join(m, " or ") +
                                      ", not " + std::to_string(major_of(r.version)) + ".x"};
  }
  return Violation{"framework", need.label() + " needs " + util::join(rules, " or ")};
}

int workload_score(const WorkloadRow* w, const std::vector<std::string>& labels,
                   const std::string& version) {
  if (!w) {
    return 0;
  }
  if (!w->label.empty()) {
    if (std::find(labels.begin(), labels.end(), w->label) != labels.end()) {
      return 3;
    }
    if (version3(version) == w->label) {
      return 2;
    }
  }
  return major_of(version) == w->major ? 1 : 0;
}

int variant_score(const RecommendInput& in, int cuda) {
  if (in.cuda_major || in.driver) {
    return cuda; // the toolkit fixes it; else the newest the driver runs
  }
  return cuda == 12 ? 3 : (cuda == 13 ? 2 : 1);
}

struct Scored {
  Candidate c;
  int workload = 0, pin = 0, variant = 0;
};

bool better(const Scored& a, const Scored& b) {
  if (a.workload != b.workload) {
    return a.workload > b.workload;
  }
  if (a.pin != b.pin) {
    return a.pin > b.pin;
  }
  if (int v = compare_versions(a.c.version, b.c.version); v != 0) {
    return v > 0; // newest first: "pinned" never outranks "newer"
  }
  if (a.variant != b.variant) {
    return a.variant > b.variant;
  }
  return a.c.pinned && !b.c.pinned;
}

// What `need` uses of release `version` for CUDA `cuda`, and whether one of those builds
// pins exactly this release.
Served served(const FrameworkNeed& need, const std::string& version, int cuda, bool& exact_pin) {
  std::vector<std::string> tags, built, any;
  VersionSet versions = VersionSet::none();
  for (const auto& b : need.builds()) {
    if (b.check == Check::optional) {
      return {need.label(), "cuDNN optional"};
    }
    const BuildVariant& v = *b.variant;
    if (v.cuda_major != cuda || !variant_ok(v, b.check, version)) {
      continue;
    }
    versions = versions.unite(b.row->effective.intersect(need.req.versions));
    std::string tag = v.wheel.empty() ? "CUDA " + v.cuda : v.wheel;
    if (std::find(tags.begin(), tags.end(), tag) == tags.end()) {
      tags.push_back(tag);
    }
    // Built against 9.1.0.70 or 8.9; a major alone ("9") accepts any cuDNN 9.x.
    auto& list = v.cudnn.find('.') == std::string::npos ? any : built;
    std::string what = v.cudnn.find('.') == std::string::npos ? v.cudnn + ".x" : v.cudnn;
    if (std::find(list.begin(), list.end(), what) == list.end()) {
      list.push_back(what);
    }
    if (util::split(v.cudnn, '.').size() >= 3 && version3(v.cudnn) == version3(version)) {
      exact_pin = true;
    }
  }
  std::vector<std::string> how;
  if (!built.empty()) {
    how.push_back("built against " + util::join(built, ", "));
  }
  if (!any.empty()) {
    how.push_back("any cuDNN " + util::join(any, " or "));
  }
  // A range (torch>=2.3) says which of its versions this release serves.
  std::string which = need.req.exact ? "" : "versions " + versions.describe() + ": ";
  return {need.label(), which + util::join(tags, ", ") + " builds (" + util::join(how, "; ") + ")"};
}

} // namespace

std::vector<Violation> evaluate(const ReleaseRow& r, int cuda, const RecommendInput& in,
                                const Compat& compat, const Active& a) {
  std::vector<Violation> out;
  auto plat = r.platforms.find(in.platform);
  if (plat == r.platforms.end()) {
    out.push_back({"platform", "no " + in.platform + " build"});
    return out;
  }
  if (std::find(plat->second.begin(), plat->second.end(), cuda) == plat->second.end()) {
    out.push_back({"cuda", "no CUDA " + std::to_string(cuda) + " build for " + in.platform});
    return out;
  }
  for (size_t i : a.needs) {
    if (auto v = framework_violation(in.frameworks[i], r, cuda)) {
      out.push_back(std::move(*v));
    }
  }
  if (a.toolkit && in.cuda_major && *in.cuda_major != cuda) {
    out.push_back({"toolkit", "the CUDA toolkit is " + std::to_string(*in.cuda_major) + " (" +
                                  in.cuda_source + "), not CUDA " + std::to_string(cuda)});
  }
  if (a.driver && in.driver) {
    const DriverRow* d = compat.driver_minimum(cuda);
    if (d && compare_versions(*in.driver, d->linux_min) < 0) {
      out.push_back({"driver", "CUDA " + std::to_string(cuda) + " builds need driver >= " +
                                   d->linux_min + ", this one is " + *in.driver});
    }
  }
  if (auto gpus = judged_gpus(in); a.cc && !gpus.empty()) {
    // The install gate's table and judgement (manifests/gpu_support.json).
    auto report = gpu::check_support(gpu::builtin_support(), r.version, cuda, gpus);
    for (const auto& v : report.gpus) {
      if (v.verdict == gpu::Verdict::unsupported) {
        // Without the release's own version ("its CUDA 13 build"): the rejection is listed
        // under its release, and releases that fail alike form one group (issue 37, item 8).
        std::string message = v.message;
        const std::string build = "cuDNN " + r.version + " for CUDA " + std::to_string(cuda);
        if (auto at = message.find(build); at != std::string::npos) {
          message.replace(at, build.size(), "its CUDA " + std::to_string(cuda) + " build");
        }
        out.push_back({"cc", message});
      } else if (v.verdict == gpu::Verdict::unknown) {
        out.push_back({"cc", "no support matrix known for " + r.label + " for CUDA " +
                                 std::to_string(cuda) + " (compute capability " +
                                 v.gpu.compute_capability + " unconfirmed)"});
      }
    }
  }
  if (a.recall && in.recalls) {
    if (const auto* hit = in.recalls->find_recall(r.version, cuda)) {
      out.push_back({"recall", "recalled: " + hit->reason +
                                   (hit->url.empty() ? "" : " (" + hit->url + ")") + " [" +
                                   hit->list + "]"});
    }
  }
  if (a.pin && in.require_pin && !pinned(r, in)) {
    out.push_back({"pin", "its manifest has no pin and --require-pin is set (add its sha256 to "
                          "/etc/cudnnctl/pins.d/)"});
  }
  return out;
}

std::vector<Pair> feasible(const RecommendInput& in, const Compat& compat, const Active& a) {
  std::vector<Pair> out;
  for (const auto& r : compat.releases) {
    for (int cuda : cudas_of(r)) {
      if (evaluate(r, cuda, in, compat, a).empty()) {
        out.push_back({&r, cuda});
      }
    }
  }
  return out;
}

std::vector<Candidate> rank(const std::vector<Pair>& pairs, const RecommendInput& in,
                            const Compat& compat, const std::vector<size_t>& needs) {
  const WorkloadRow* w = in.workload ? compat.workload(*in.workload) : nullptr;
  // One candidate per archive: the sha256 of the platform's build, else version + CUDA.
  std::vector<std::string> order;
  std::map<std::string, std::vector<Pair>> by_archive;
  for (const auto& p : pairs) {
    const Archive* a = p.release->archive(in.platform, p.cuda);
    std::string key =
        a && !a->sha256.empty() ? a->sha256 : p.release->version + "/" + std::to_string(p.cuda);
    if (!by_archive.count(key)) {
      order.push_back(key);
    }
    by_archive[key].push_back(p);
  }
  std::vector<Scored> scored;
  for (const auto& key : order) {
    const auto& group = by_archive[key];
    // The label to install: a pinned one, else the one with fewer components (9.x style).
    const Pair* pick = &group.front();
    Candidate c;
    for (const auto& p : group) {
      c.labels.push_back(p.release->label);
      bool pp = pinned(*p.release, in), cur = pinned(*pick->release, in);
      if ((pp && !cur) || (pp == cur && p.release->label.size() < pick->release->label.size())) {
        pick = &p;
      }
    }
    c.label = pick->release->label;
    c.version = pick->release->version;
    c.cuda = pick->cuda;
    c.pinned = pinned(*pick->release, in);
    if (const Archive* a = pick->release->archive(in.platform, pick->cuda)) {
      c.size = a->size;
      c.sha256 = a->sha256;
    }
    Scored s;
    s.workload = workload_score(w, c.labels, c.version);
    for (size_t i : needs) {
      bool exact = false;
      c.serves.push_back(served(in.frameworks[i], c.version, c.cuda, exact));
      s.pin += exact ? 1 : 0;
    }
    if (w && s.workload > 0) {
      c.why.push_back("hint for --workload " + w->name + ": " + w->guide);
    }
    if (s.pin) {
      c.why.push_back("the exact cuDNN the framework build was made with");
    }
    s.variant = variant_score(in, c.cuda);
    s.c = std::move(c);
    scored.push_back(std::move(s));
  }
  std::stable_sort(scored.begin(), scored.end(), better);
  std::vector<Candidate> out;
  for (size_t i = 0; i < scored.size(); ++i) {
    if (i == 0) {
      bool newest = std::none_of(scored.begin(), scored.end(), [&](const Scored& o) {
        return compare_versions(o.c.version, scored[0].c.version) > 0;
      });
      if (newest) {
        scored[0].c.why.push_back("the newest release that meets every hard constraint");
      }
    }
    if (!scored[i].c.pinned) {
      scored[i].c.why.push_back("note: its manifest has no built-in pin (install warns; "
                                "--require-pin refuses it)");
    }
    out.push_back(std::move(scored[i].c));
  }
  return out;
}

} // namespace detail

std::vector<std::string> violations(const ReleaseRow& r, int cuda, const RecommendInput& in,
                                    const Compat& compat) {
  std::vector<std::string> out;
  for (auto& v : detail::evaluate(r, cuda, in, compat, detail::all_active(in))) {
    out.push_back(std::move(v.text));
  }
  return out;
}

std::string size_text(uint64_t bytes) {
  std::string digits = std::to_string(bytes);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) {
      grouped += ',';
    }
    grouped += digits[i];
  }
  return grouped + " B (" + std::to_string((bytes + (1u << 19)) >> 20) + " MiB)";
}

std::vector<gpu::GpuFacts> judged_gpus(const RecommendInput& in) {
  if (!in.gpus.empty()) {
    return in.gpus;
  }
  if (in.compute_capability) {
    return {gpu::GpuFacts{0, "", *in.compute_capability}};
  }
  return {};
}

} // namespace cudnnctl::doctor
