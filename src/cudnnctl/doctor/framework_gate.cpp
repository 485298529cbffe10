// SPDX-License-Identifier: Apache-2.0
#include "doctor/framework_gate.hpp"

#include "doctor/ldconf.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <functional>
#include <map>

namespace cudnnctl::doctor {

namespace {

std::string rule_sentence(Check check) {
  switch (check) {
  case Check::major:
    return "the same cuDNN major is required";
  case Check::optional:
    return "cuDNN is optional for it";
  case Check::minor:
    break;
  }
  return "the same major and a runtime minor >= the built minor are required";
}

FrameworkVerdict judge(const RootFs& rootfs, const Framework& f, const GateInput& in,
                       const Compat& compat, const std::string& multiarch) {
  FrameworkVerdict v;
  v.name = f.kind;
  v.version = f.version;
  v.path = f.site;
  v.built_for = f.expected.value_or("");
  v.built_source = f.expected_source;
  Check check = compat.check_for(f.kind, f.version);
  if (auto own = own_cudnn_copy(rootfs, f, multiarch)) {
    v.would_load = *own;
    v.verdict = "own-copy";
    v.why = "it loads its own cuDNN, " + *own + ": no switch of the system copy reaches it";
    return v;
  }
  if (check == Check::optional || !f.cudnn_major) {
    v.verdict = "unaffected";
    v.why = check == Check::optional ? rule_sentence(check)
                                     : "it names no libcudnn.so.N and no cuDNN it was built for";
    return v;
  }
  auto t = std::find_if(in.targets.begin(), in.targets.end(),
                        [&](const GateTarget& g) { return g.major == f.cudnn_major; });
  if (t == in.targets.end()) {
    v.verdict = "unaffected";
    v.why =
        "it loads libcudnn.so." + std::to_string(f.cudnn_major) + ", which this does not change";
    return v;
  }
  if (!t->version) {
    v.would_load = "nothing"; // of cudnnctl's: other copies are not modelled
    v.verdict = "breaks";
    v.why = "cudnnctl would serve no libcudnn.so." + std::to_string(f.cudnn_major) +
            " afterwards (a copy outside cudnnctl, such as a distribution package's, is not "
            "weighed)";
    return v;
  }
  v.would_load = *t->version;
  if (v.built_for.empty()) {
    v.verdict = "ok";
    v.why = "the cuDNN it was built for is not known: not judged";
    return v;
  }
  v.verdict = check_accepts(check, v.built_for, *t->version) ? "ok" : "breaks";
  v.why = rule_sentence(check);
  return v;
}

// The newest known release that every framework of `major` in `judged` accepts and that has a
// build for the CUDA major; nullptr when none.
const ReleaseRow* serving_release(const std::vector<std::pair<const Framework*, Check>>& judged,
                                  int major, const GateInput& in, const Compat& compat) {
  for (auto r = compat.releases.rbegin(); r != compat.releases.rend(); ++r) {
    if (major_of(r->version) != major) {
      continue;
    }
    if (in.cuda_major) {
      auto p = r->platforms.find(in.platform);
      if (p == r->platforms.end() ||
          std::find(p->second.begin(), p->second.end(), in.cuda_major) == p->second.end()) {
        continue;
      }
    }
    bool all = std::all_of(judged.begin(), judged.end(), [&](const auto& fc) {
      return fc.first->cudnn_major != major || !fc.first->expected ||
             check_accepts(fc.second, *fc.first->expected, r->version);
    });
    if (all) {
      return &*r;
    }
  }
  return nullptr;
}

// The version that satisfies every framework that loads the system's cuDNN (computed from the
// releases cudnnctl knows, newest first, as `recommend` ranks them), or one slot per cuDNN
// major when they need several.
std::string way_out(const std::vector<std::pair<const Framework*, Check>>& judged,
                    const GateInput& in, const Compat& compat) {
  std::map<int, std::vector<std::string>, std::greater<>> by_major;
  for (const auto& [f, check] : judged) {
    by_major[f->cudnn_major].push_back(f->kind + (f->version.empty() ? "" : " " + f->version));
  }
  std::vector<std::string> parts, commands;
  for (const auto& [major, names] : by_major) {
    const ReleaseRow* r = serving_release(judged, major, in, compat);
    if (!r) {
      return "no release cudnnctl knows serves every framework of cuDNN " + std::to_string(major) +
             " found (" + util::join(names, ", ") + "): `cudnnctl recommend` names what each needs";
    }
    parts.push_back("cuDNN " + r->label + " for " + util::join(names, ", "));
    commands.push_back("`cudnnctl install " + r->label + (commands.empty() ? "" : " --alongside") +
                       "`");
  }
  if (parts.empty()) {
    return "";
  }
  if (parts.size() == 1) {
    return parts.front() + " serves every framework found (" + commands.front() + ")";
  }
  return "no single release serves every framework found: keep one slot per cuDNN major, " +
         util::join(parts, "; ") + " (" + util::join(commands, ", then ") + ")";
}

} // namespace

std::vector<const FrameworkVerdict*> GateReport::breaking() const {
  std::vector<const FrameworkVerdict*> out;
  for (const auto& f : frameworks) {
    if (f.verdict == "breaks") {
      out.push_back(&f);
    }
  }
  return out;
}

std::vector<Framework> node_frameworks(const RootFs& rootfs, const GateInput& in,
                                       const Compat& compat) {
  return find_frameworks(rootfs, python_sites(rootfs, in.conda_prefix, in.extra), compat,
                         default_lib_dirs(machine_multiarch()));
}

GateReport evaluate_gate(const GateInput& in) {
  const Compat& compat = in.compat ? *in.compat : builtin_compat();
  RootFs rootfs(in.root);
  std::string multiarch = machine_multiarch();
  GateReport out;
  std::vector<Framework> found = node_frameworks(rootfs, in, compat);
  std::vector<std::pair<const Framework*, Check>> loaders; // those that load the system's
  for (const auto& f : found) {
    out.frameworks.push_back(judge(rootfs, f, in, compat, multiarch));
    const auto& v = out.frameworks.back();
    if (v.verdict != "own-copy" && f.cudnn_major && f.expected &&
        compat.check_for(f.kind, f.version) != Check::optional) {
      loaders.emplace_back(&f, compat.check_for(f.kind, f.version));
    }
  }
  if (!out.breaking().empty()) {
    out.way_out = way_out(loaders, in, compat);
  }
  return out;
}

// "would load 9.1.0.70", or for a switch that leaves cudnnctl serving nothing of the
// framework's major, "would load no copy of cudnnctl's" (what else the loader finds is not
// modelled, so the text claims no more).
static std::string would_load_phrase(const FrameworkVerdict& v) {
  return "would load " + (v.would_load == "nothing" ? "no copy of cudnnctl's" : v.would_load);
}

std::string describe(const FrameworkVerdict& v) {
  std::string s = v.name + (v.version.empty() ? "" : " " + v.version) + " at " + v.path;
  if (!v.built_for.empty()) {
    s += ": built for cuDNN " + v.built_for;
  }
  if (!v.would_load.empty()) {
    s += (v.built_for.empty() ? ": " : ", ") + would_load_phrase(v);
  }
  return s + ": " + v.verdict + " (" + v.why + ")";
}

std::string refusal(const GateReport& report, const std::string& switching, bool forced) {
  auto broken = report.breaking();
  std::vector<std::string> each;
  for (const auto* v : broken) {
    each.push_back(v->name + (v->version.empty() ? "" : " " + v->version) + " at " + v->path +
                   " was built for cuDNN " + (v->built_for.empty() ? "?" : v->built_for) +
                   (v->built_source.empty() ? "" : " (" + v->built_source + ")") + " and " +
                   would_load_phrase(*v) + ": " + v->why);
  }
  std::string n = std::to_string(broken.size()) + " framework" + (broken.size() == 1 ? "" : "s");
  if (forced) {
    return switching + " breaks " + n + " that load" + (broken.size() == 1 ? "s" : "") +
           " the system's cuDNN: " + util::join(each, "; ") +
           "; they fail until a release they accept is active (`cudnnctl rollback`" +
           (report.way_out.empty() ? std::string() : "; " + report.way_out) + ")";
  }
  return switching + " would break " + std::to_string(broken.size()) + " framework" +
         (broken.size() == 1 ? "" : "s") + " that load" + (broken.size() == 1 ? "s" : "") +
         " the system's cuDNN: " + util::join(each, "; ") + "; nothing was changed; ways out: " +
         (report.way_out.empty() ? std::string() : report.way_out + ", or ") +
         "--force to switch anyway (`--dry-run` shows the verdict on every framework found)";
}

} // namespace cudnnctl::doctor
