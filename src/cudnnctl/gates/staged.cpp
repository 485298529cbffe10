// SPDX-License-Identifier: Apache-2.0
#include "gates/staged.hpp"

#include "elf/elf.hpp"
#include "manifest/version.hpp"
#include "smoke/runner.hpp"
#include "store/entry.hpp"
#include "util/fs.hpp"
#include "validate/header.hpp"
#include "validate/runtime.hpp"
#include "validate/tree.hpp"

#include <algorithm>

namespace cudnnctl::gates {

namespace {

bool has(const std::vector<std::string>& components, const char* c) {
  return std::find(components.begin(), components.end(), c) != components.end();
}

// Fails the gate: recorded as a check, all problems in the validation, one line in the
// error ("lib/x: what (and N more problems: ...)").
std::unexpected<Error> refuse(Findings& out, const std::string& gate,
                              const std::vector<validate::Finding>& problems) {
  Validation v{gate, {}};
  for (const auto& p : problems) {
    v.problems.push_back(p.str());
  }
  out.validation = std::move(v);
  std::string msg = problems.front().str();
  if (problems.size() > 1) {
    msg += " (and " + std::to_string(problems.size() - 1) + " more: " + problems[1].str() +
           (problems.size() > 2 ? "; ..." : "") + ")";
  }
  out.check(gate, "failed", msg);
  return fail(ErrorCode::integrity, msg);
}

Result<validate::HeaderVersion> check_header(Env& env, Findings& out, const fs::path& tree,
                                             const validate::HeaderVersion& want,
                                             const std::string& manifest_version) {
  fs::path include = tree / "include";
  fs::path header = include / "cudnn_version.h";
  if (!util::exists_nofollow(header)) {
    return refuse(out, "header",
                  {{"include/cudnn_version.h", "missing (the headers component must carry it)"}});
  }
  std::vector<validate::Finding> problems;
  std::vector<std::string> names = {"cudnn_version.h",
                                    "cudnn_version_v" + std::to_string(want.major) + ".h"};
  std::optional<validate::HeaderVersion> found;
  for (const auto& name : names) {
    fs::path p = include / name;
    if (!util::exists_nofollow(p)) {
      continue;
    }
    auto h = validate::read_version_header(p);
    if (!h) {
      std::string msg = h.error().message;
      if (msg.starts_with(p.string() + ": ")) {
        msg = msg.substr(p.string().size() + 2);
      }
      problems.push_back({"include/" + name, msg});
      continue;
    }
    if (h->str() != want.str()) {
      problems.push_back({"include/" + name, "says " + h->str() +
                                                 " (CUDNN_MAJOR/MINOR/"
                                                 "PATCHLEVEL), but the manifest says " +
                                                 manifest_version});
      continue;
    }
    if (!found) {
      found = *h;
    }
  }
  if (!problems.empty()) {
    return refuse(out, "header", problems);
  }
  out.check("header", "passed", "cudnn_version.h agrees with the manifest (" + want.str() + ")");
  env.notes.action("cudnn_version.h agrees with the manifest (" + want.str() + ")");
  return *found;
}

bool machine_matches(const std::string& platform) {
  auto host = validate::host_machine();
  auto want = validate::platform_machine(platform);
  return host && want && *host == *want;
}

Result<validate::HeaderVersion> wanted_version(const manifest::Selection& selection) {
  TRY_ASSIGN(manifest::Version mv, selection.parsed_version);
  if (mv.parts.size() < 3) {
    return fail(ErrorCode::usage, "manifest version " + selection.version + " has no X.Y.Z");
  }
  return validate::HeaderVersion{static_cast<int>(mv.parts[0]), static_cast<int>(mv.parts[1]),
                                 static_cast<int>(mv.parts[2])};
}

Status check_runtime(Env& env, Findings& out, const fs::path& lib, const validate::HeaderVersion& v,
                     const std::string& platform) {
  if (!machine_matches(platform)) {
    auto want = validate::platform_machine(platform);
    std::string why = "runtime probe skipped: " + platform + " libraries (" +
                      (want ? elf::machine_name(*want) : std::string("unknown machine")) +
                      ") cannot be loaded on this host";
    env.notes.warn(why);
    out.check("runtime", "skipped", why);
    return {};
  }
  const smoke::ProbeRequest request = validate::probe_request(fs::absolute(lib), v);
  std::optional<smoke::ProbeResult> warm;
  if (env.warm_probe) {
    warm = env.warm_probe->probe(request, env.smoke_timeout());
    if (!warm) {
      env.notes.info("runtime probe: in a child of its own (the waiting GPU child declined: " +
                         env.warm_probe->declined() + ")",
                     2);
    }
    env.warm_probe = nullptr;
  }
  smoke::ProbeResult probe;
  if (warm) {
    probe = std::move(*warm);
    if (probe.warm_ms && probe.warm_driver) {
      env.notes.info(std::string("runtime probe: the driver ") +
                         (probe.warm_context ? "and GPU 0's context were" : "was") +
                         " initialised beside the download, with the GPU inventory (" +
                         std::to_string(static_cast<long>(*probe.warm_ms)) + " ms)",
                     2);
    }
  } else {
    TRY_ASSIGN(probe, smoke::run_probe(request, env.smoke_timeout()));
  }
  auto verdict = validate::judge_probe(probe, v);
  if (warm && !verdict.problems.empty()) {
    // The waiting child's probe (with the loads a repack's pass made early) is a speed-up: a
    // speed-up that fails must not fail a correct install (issue 34, F6), so the verdict is a
    // fresh child's, which loads the finished tree.
    env.notes.info("runtime probe: the waiting GPU child's probe failed (" +
                       verdict.problems.front().str() + "); probing again in a child of its own",
                   1);
    TRY_ASSIGN(probe, smoke::run_probe(request, env.smoke_timeout()));
    verdict = validate::judge_probe(probe, v);
  }
  for (const auto& w : verdict.warnings) {
    env.notes.warn(w);
  }
  if (!verdict.problems.empty()) {
    return refuse(out, "runtime", verdict.problems);
  }
  out.check("runtime", verdict.warnings.empty() ? "passed" : "warning", verdict.summary);
  env.notes.action("runtime probe: " + verdict.summary);
  return {};
}

std::vector<std::string> components_or_default(const std::vector<std::string>& components) {
  return components.empty() ? store::default_components() : components;
}

} // namespace

std::optional<smoke::ProbeRequest>
runtime_probe_request(const std::filesystem::path& tree, const manifest::Selection& selection,
                      const std::vector<std::string>& components) {
  auto want = wanted_version(selection);
  if (!has(components_or_default(components), "runtime") || !want ||
      !machine_matches(selection.platform)) {
    return std::nullopt;
  }
  return validate::probe_request(fs::absolute(tree / "lib"), *want);
}

Status validate_staged(Env& env, const std::filesystem::path& tree,
                       const manifest::Selection& selection,
                       const std::vector<std::string>& components_arg, Findings& out) {
  const std::vector<std::string> components = components_or_default(components_arg);
  TRY_ASSIGN(validate::HeaderVersion want, wanted_version(selection));
  if (has(components, "headers")) {
    TRY(check_header(env, out, tree, want, selection.version));
  }
  if (!has(components, "runtime")) {
    return {};
  }
  fs::path lib = tree / "lib";
  if (!validate::library_set_known(want)) {
    env.notes.warn("cuDNN " + want.str() + " is a major version cudnnctl does not know; only " +
                   "libcudnn is checked");
  }
  auto findings = validate::check_library_tree(lib, want, selection.platform);
  if (!findings.empty()) {
    return refuse(out, "libraries", findings);
  }
  auto set = validate::library_set(want);
  std::string what = std::to_string(set.size()) + " libraries of cuDNN " + want.str() +
                     ": complete set, symlink chains, SONAMEs, " + selection.platform +
                     " ELF machine";
  out.check("libraries", "passed", what);
  env.notes.action("checked " + what);
  return check_runtime(env, out, lib, want, selection.platform);
}

} // namespace cudnnctl::gates
