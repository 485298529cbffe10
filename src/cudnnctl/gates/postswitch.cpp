// SPDX-License-Identifier: Apache-2.0
#include "gates/postswitch.hpp"

#include "gates/perfgate.hpp"
#include "integrate/loader.hpp"
#include "manifest/version.hpp"
#include "util/hooks.hpp"
#include "validate/driver.hpp"
#include "validate/header.hpp"
#include "validate/libset.hpp"

#include <algorithm>

namespace cudnnctl::gates {

namespace {

bool has_component(const store::EntryInfo& e, const char* c) {
  return std::find(e.components.begin(), e.components.end(), c) != e.components.end();
}

// Can this host load libraries of `platform` at all?
bool host_runs(const std::string& platform) {
  auto host = validate::host_machine();
  auto want = validate::platform_machine(platform);
  return host && want && *host == *want;
}

// Why the loader check cannot run here, or "" when it can.
std::string loader_skip_reason(const store::Layout& layout, const store::EntryInfo& entry) {
  if (!has_component(entry, "runtime")) {
    return "no runtime component installed";
  }
  if (!host_runs(entry.platform)) {
    return "loader check skipped: " + entry.platform + " libraries do not run here";
  }
  if (layout.user_mode()) {
    return "loader check skipped: --user mode leaves the system's loader alone (activation is "
           "through module files and `cudnnctl env`)";
  }
  if (!integrate::loader_config_warnings(layout).empty()) {
    return "loader check skipped: the ld.so configuration under " + layout.root().string() +
           " does not include /etc/ld.so.conf.d";
  }
  return {};
}

// The dynamic loader resolves libcudnn.so.<major> into the entry.
Status check_loader(Env& env, const store::EntryInfo& entry, Findings& out) {
  const auto& layout = env.layout;
  if (std::string why = loader_skip_reason(layout, entry); !why.empty()) {
    if (has_component(entry, "runtime")) {
      env.notes.warn(why);
    }
    out.check("loader", "skipped", why);
    return {};
  }
  auto major = entry.version.substr(0, entry.version.find('.'));
  std::string soname = "libcudnn.so." + major;
  fs::path want_dir = layout.sys_entry_dir(entry.name) / "lib";
  std::string expected = (want_dir / soname).string();
  auto failed = [&](const std::string& msg) -> Status {
    out.check("loader", "failed", msg);
    return fail(ErrorCode::rolled_back, msg);
  };
  if (layout.root_is_slash()) {
    // A real process, no LD_LIBRARY_PATH, no RPATH: exactly what every program gets.
    TRY_ASSIGN(smoke::WhichResult w, smoke::run_which(soname, env.smoke_timeout()));
    if (!w.path) {
      return failed("loader check failed: a process without LD_LIBRARY_PATH cannot load " + soname +
                    " (" + w.error + ")");
    }
    std::error_code ec;
    auto got_dir = fs::weakly_canonical(fs::path(*w.path).parent_path(), ec);
    auto want_real = fs::weakly_canonical(want_dir, ec);
    if (got_dir != want_real) {
      return failed("loader check failed: a process without LD_LIBRARY_PATH loads " + soname +
                    " from " + *w.path + ", expected " + expected);
    }
    out.check("loader", "passed", "a child process loads " + soname + " from " + *w.path);
    env.notes.action("loader check: a child process loads " + soname + " from " + *w.path);
    return {};
  }
  TRY_ASSIGN(auto found, integrate::ldcache_lookup(layout, soname));
  if (!found || *found != expected) {
    return failed("loader check failed: the ld.so cache under " + layout.root().string() +
                  " resolves " + soname + " to " + (found ? *found : std::string("nothing")) +
                  ", expected " + expected);
  }
  out.check("loader", "passed", "ldconfig -r: " + soname + " resolves to " + expected);
  env.notes.action("loader check: the ld.so cache under " + layout.root().string() + " resolves " +
                   soname + " to " + expected + " (inside the root)");
  return {};
}

} // namespace

Result<smoke::SmokeResult> run_smoke_on_entry(Env& env, const store::EntryInfo& entry,
                                              Findings& out) {
  auto skipped = [&](const std::string& why) {
    smoke::SmokeResult r;
    r.outcome = smoke::Outcome::skipped;
    r.message = why;
    out.smoke = r;
    out.check("smoke", "skipped", why);
    return r;
  };
  if (!has_component(entry, "runtime")) {
    return skipped("no runtime component installed");
  }
  if (!host_runs(entry.platform)) {
    return skipped(entry.platform + " libraries do not run on this host");
  }
  TRY_ASSIGN(manifest::Version v, entry.parsed_version);
  validate::HeaderVersion hv{static_cast<int>(v.major()),
                             v.parts.size() > 1 ? static_cast<int>(v.parts[1]) : 0,
                             v.parts.size() > 2 ? static_cast<int>(v.parts[2]) : 0};
  fs::path shim =
      env.layout.entry_dir(entry.name) / "lib" / ("libcudnn.so." + std::to_string(v.major()));
  env.notes.info("running the GPU smoke test on " + entry.name);
  TRY_ASSIGN(smoke::SmokeResult r,
             smoke::run_smoke(fs::absolute(shim), hv.runtime_number(), env.smoke_timeout()));
  out.smoke = r;
  out.check("smoke", smoke::outcome_name(r.outcome), r.message);
  return r;
}

Status post_switch_checks(Env& env, const std::string& entry_name, const Demands& demands,
                          Findings& out) {
  TRY(util::hook("post-switch-check"));
  TRY_ASSIGN(store::EntryInfo entry, store::read_entry(env.layout, entry_name));
  if (!demands.loader_skip.empty()) {
    out.check("loader", "skipped", demands.loader_skip);
    env.notes.info(demands.loader_skip);
  } else {
    TRY(check_loader(env, entry, out));
  }
  if (demands.no_smoke) {
    out.check("smoke", "skipped", "--no-smoke");
    out.smoke_off = "--no-smoke";
    return demands.perf_gate ? perf_gate(env, entry, demands, out) : Status{};
  }
  auto r = run_smoke_on_entry(env, entry, out);
  if (!r) {
    Error e = r.error();
    e.code = ErrorCode::rolled_back;
    out.check("smoke", "failed", e.message);
    return fail(e);
  }
  switch (r->outcome) {
  case smoke::Outcome::passed:
    env.notes.action("smoke test passed: " + r->message);
    return demands.perf_gate ? perf_gate(env, entry, demands, out) : Status{};
  case smoke::Outcome::skipped:
    if (demands.require_gpu) {
      return fail(ErrorCode::rolled_back, "smoke test could not run on a GPU (" + r->message +
                                              ") and --require-gpu is set");
    }
    env.notes.warn("smoke test skipped: " + r->message);
    return demands.perf_gate ? perf_gate(env, entry, demands, out) : Status{};
  case smoke::Outcome::failed:
    break;
  }
  return fail(ErrorCode::rolled_back, "smoke test failed: " + r->message);
}

} // namespace cudnnctl::gates
