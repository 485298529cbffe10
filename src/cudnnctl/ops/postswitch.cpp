// SPDX-License-Identifier: Apache-2.0
#include "ops/postswitch.hpp"

#include "host/host.hpp"
#include "integrate/loader.hpp"
#include "manifest/version.hpp"
#include "ops/inuse.hpp"
#include "util/hooks.hpp"
#include "util/strings.hpp"
#include "validate/driver.hpp"
#include "validate/header.hpp"
#include "validate/libset.hpp"

#include <algorithm>
#include <cstdio>

namespace cudnnctl::ops {

using nlohmann::json;

void record_check(Context& ctx, const std::string& name, const std::string& status,
                  const std::string& message) {
  auto& data = ctx.report().data;
  if (!data.contains("checks") || !data["checks"].is_array()) {
    data["checks"] = json::array();
  }
  data["checks"].push_back({{"name", name}, {"status", status}, {"message", message}});
}

namespace {

std::chrono::seconds smoke_timeout(const Context& ctx) {
  return std::chrono::seconds(std::max(1, ctx.config().smoke_timeout));
}

bool has_component(const store::EntryInfo& e, const char* c) {
  return std::find(e.components.begin(), e.components.end(), c) != e.components.end();
}

// Can this host load libraries of `platform` at all?
bool host_runs(const std::string& platform) {
  auto host = validate::host_machine();
  auto want = validate::platform_machine(platform);
  return host && want && *host == *want;
}

// The CUDA variant of the archive against the toolkit under the root. Returns a refusal
// text, or "" (recording the check either way).
std::string check_cuda_toolkit(Context& ctx, const manifest::Selection& sel) {
  const auto& layout = ctx.layout();
  auto tk = host::detect_cuda(layout.root(), ctx.config().cuda_home);
  auto& req = ctx.report().data["requirements"];
  if (!tk) {
    std::string w = "no CUDA toolkit found at " + layout.host(ctx.config().cuda_home).string() +
                    ": the CUDA " + std::to_string(sel.cuda_major) +
                    " build cannot be checked against it (install a CUDA " +
                    std::to_string(sel.cuda_major) + ".x toolkit before using cuDNN)";
    // Without --cuda (flag or config), install has already warned that no toolkit was found.
    if (ctx.opts().cuda || ctx.config().cuda) {
      ctx.warn(w);
    }
    req["cuda_toolkit"] = nullptr;
    record_check(ctx, "cuda-toolkit", "skipped", w);
    return {};
  }
  std::string have = std::to_string(tk->major) +
                     (tk->minor >= 0 ? "." + std::to_string(tk->minor) : std::string());
  req["cuda_toolkit"] = {{"major", tk->major},
                         {"minor", tk->minor},
                         {"home", tk->home.string()},
                         {"source", tk->source}};
  if (tk->major != sel.cuda_major) {
    return "the archive is cuDNN's CUDA " + std::to_string(sel.cuda_major) +
           " build, but the CUDA toolkit at " + tk->home.string() + " is CUDA " + have + " (" +
           tk->source + "): install the CUDA " + std::to_string(tk->major) + " build (--cuda " +
           std::to_string(tk->major) + ") or a CUDA " + std::to_string(sel.cuda_major) +
           ".x toolkit";
  }
  record_check(ctx, "cuda-toolkit", "passed",
               "CUDA " + std::to_string(sel.cuda_major) + " build matches the CUDA " + have +
                   " toolkit at " + tk->home.string());
  return {};
}

// The NVIDIA driver against the minimum for the archive's CUDA major.
std::string check_driver(Context& ctx, const manifest::Selection& sel) {
  auto& req = ctx.report().data["requirements"];
  std::string problem;
  fs::path proc = proc_dir();
  auto drv = validate::read_driver_version(proc, &problem);
  auto min = validate::driver_minimum(sel.cuda_major);
  req["driver"] = drv ? json(drv->str()) : json(nullptr);
  req["driver_minimum"] = min ? json(min->linux_min.str()) : json(nullptr);
  if (!problem.empty()) {
    ctx.warn(problem);
  }
  if (!drv) {
    record_check(ctx, "driver", "skipped",
                 problem.empty() ? "no NVIDIA driver loaded (" +
                                       (proc / "driver/nvidia/version").string() + " absent)"
                                 : problem);
    return {};
  }
  if (!min) {
    std::string w = "no known driver minimum for CUDA " + std::to_string(sel.cuda_major) +
                    " builds; driver " + drv->str() + " not checked";
    ctx.warn(w);
    record_check(ctx, "driver", "skipped", w);
    return {};
  }
  if (*drv < min->linux_min) {
    auto newest = validate::newest_cuda_for(*drv);
    std::string fix = newest ? "install the CUDA " + std::to_string(*newest) + " build (--cuda " +
                                   std::to_string(*newest) + ", needs driver >= " +
                                   validate::driver_minimum(*newest)->linux_min.str() +
                                   ") if the release offers it, or upgrade the driver to " +
                                   min->linux_min.str() + " or newer"
                             : "upgrade the driver to " + min->linux_min.str() + " or newer";
    return "the NVIDIA driver " + drv->str() + " is older than the " + min->linux_min.str() +
           " that CUDA " + std::to_string(sel.cuda_major) + " builds need (" + min->source +
           "): " + fix;
  }
  record_check(ctx, "driver", "passed",
               "driver " + drv->str() + " >= " + min->linux_min.str() + " (CUDA " +
                   std::to_string(sel.cuda_major) + ")");
  return {};
}

// The dynamic loader resolves libcudnn.so.<major> into the entry.
Status check_loader(Context& ctx, const store::EntryInfo& entry) {
  const auto& layout = ctx.layout();
  if (!has_component(entry, "runtime")) {
    record_check(ctx, "loader", "skipped", "no runtime component installed");
    return {};
  }
  if (!host_runs(entry.platform)) {
    std::string w = "loader check skipped: " + entry.platform + " libraries do not run here";
    ctx.warn(w);
    record_check(ctx, "loader", "skipped", w);
    return {};
  }
  if (!integrate::loader_config_warnings(layout).empty()) {
    std::string w = "loader check skipped: the ld.so configuration under " +
                    layout.root().string() + " does not include /etc/ld.so.conf.d";
    ctx.warn(w);
    record_check(ctx, "loader", "skipped", w);
    return {};
  }
  auto major = entry.version.substr(0, entry.version.find('.'));
  std::string soname = "libcudnn.so." + major;
  fs::path want_dir = layout.sys_entry_dir(entry.name) / "lib";
  std::string expected = (want_dir / soname).string();
  auto failed = [&](const std::string& msg) -> Status {
    record_check(ctx, "loader", "failed", msg);
    return fail(ErrorCode::rolled_back, msg);
  };
  if (layout.root_is_slash()) {
    // A real process, no LD_LIBRARY_PATH, no RPATH: exactly what every program gets.
    TRY_ASSIGN(smoke::WhichResult w, smoke::run_which(soname, smoke_timeout(ctx)));
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
    record_check(ctx, "loader", "passed", "a child process loads " + soname + " from " + *w.path);
    ctx.action("loader check: a child process loads " + soname + " from " + *w.path);
    return {};
  }
  TRY_ASSIGN(auto found, integrate::ldcache_lookup(layout, soname));
  if (!found || *found != expected) {
    return failed("loader check failed: the ld.so cache under " + layout.root().string() +
                  " resolves " + soname + " to " + (found ? *found : std::string("nothing")) +
                  ", expected " + expected);
  }
  record_check(ctx, "loader", "passed", "ldconfig -r: " + soname + " resolves to " + expected);
  ctx.action("loader check: " + soname + " resolves to " + expected);
  return {};
}

std::string describe_gpu(const smoke::GpuResult& g) {
  std::string s = "GPU " + std::to_string(g.gpu) + " (" + g.name +
                  (g.compute_capability.empty() ? "" : ", sm " + g.compute_capability) +
                  "): " + g.status;
  if (g.max_error) {
    char buf[48];
    std::snprintf(buf, sizeof buf, ", max error %.3g", *g.max_error);
    s += buf;
  }
  char ms[32];
  std::snprintf(ms, sizeof ms, ", %.0f ms", g.ms);
  s += ms;
  if (g.status != "passed" && !g.message.empty()) {
    s += ": " + g.message;
  }
  return s;
}

} // namespace

Status check_requirements(Context& ctx, const manifest::Selection& sel, const InstallOptions& o) {
  if (o.require_gpu && o.no_smoke) {
    return fail(ErrorCode::usage,
                "--require-gpu asks for the GPU smoke test, which --no-smoke turns off");
  }
  if (o.require_gpu && !o.components.empty() &&
      std::find(o.components.begin(), o.components.end(), "runtime") == o.components.end()) {
    return fail(ErrorCode::usage,
                "--require-gpu needs the runtime component (the libraries the GPU test runs)");
  }
  std::vector<std::string> refusals;
  if (auto r = check_cuda_toolkit(ctx, sel); !r.empty()) {
    refusals.push_back(r);
  }
  if (auto r = check_driver(ctx, sel); !r.empty()) {
    refusals.push_back(r);
  }
  if (!refusals.empty()) {
    std::string msg = util::join(refusals, "; ");
    if (!ctx.opts().force) {
      record_check(ctx, "compatibility", "failed", msg);
      return fail(ErrorCode::requirement, msg + " (--force installs it anyway)");
    }
    for (const auto& r : refusals) {
      ctx.warn("--force: " + r);
    }
    record_check(ctx, "compatibility", "warning", "overridden by --force: " + msg);
  }
  if (o.require_gpu) {
    TRY_ASSIGN(smoke::SmokeResult gpus, smoke::run_gpu_presence(smoke_timeout(ctx)));
    ctx.report().data["requirements"]["gpus"] = to_json(gpus)["gpus"];
    if (gpus.outcome != smoke::Outcome::passed) {
      std::string msg = "--require-gpu: " + gpus.message +
                        " (install where a usable GPU is visible, or drop --require-gpu)";
      record_check(ctx, "gpu", "failed", msg);
      return fail(ErrorCode::requirement, msg);
    }
    record_check(ctx, "gpu", "passed", gpus.message);
  }
  return {};
}

Result<smoke::SmokeResult> run_smoke_on_entry(Context& ctx, const store::EntryInfo& entry) {
  auto skipped = [&](const std::string& why) {
    smoke::SmokeResult r;
    r.outcome = smoke::Outcome::skipped;
    r.message = why;
    ctx.report().data["smoke"] = to_json(r);
    record_check(ctx, "smoke", "skipped", why);
    ctx.line("smoke test: skipped: " + why);
    return r;
  };
  if (!has_component(entry, "runtime")) {
    return skipped("no runtime component installed");
  }
  if (!host_runs(entry.platform)) {
    return skipped(entry.platform + " libraries do not run on this host");
  }
  TRY_ASSIGN(manifest::Version v, manifest::Version::parse(entry.version));
  validate::HeaderVersion hv{static_cast<int>(v.major()),
                             v.parts.size() > 1 ? static_cast<int>(v.parts[1]) : 0,
                             v.parts.size() > 2 ? static_cast<int>(v.parts[2]) : 0};
  fs::path shim =
      ctx.layout().entry_dir(entry.name) / "lib" / ("libcudnn.so." + std::to_string(v.major()));
  ctx.info("running the GPU smoke test on " + entry.name);
  TRY_ASSIGN(smoke::SmokeResult r,
             smoke::run_smoke(fs::absolute(shim), hv.runtime_number(), smoke_timeout(ctx)));
  ctx.report().data["smoke"] = to_json(r);
  record_check(ctx, "smoke", smoke::outcome_name(r.outcome), r.message);
  for (const auto& g : r.gpus) {
    ctx.line("smoke test: " + describe_gpu(g));
  }
  if (r.gpus.empty()) {
    ctx.line(std::string("smoke test: ") + smoke::outcome_name(r.outcome) + ": " + r.message);
  }
  return r;
}

Status post_switch_checks(Context& ctx, const std::string& entry_name,
                          const InstallOptions& options) {
  TRY(util::hook("post-switch-check"));
  TRY_ASSIGN(store::EntryInfo entry, store::read_entry(ctx.layout(), entry_name));
  TRY(check_loader(ctx, entry));
  auto skip = [&](const std::string& why) {
    record_check(ctx, "smoke", "skipped", why);
    ctx.report().data["smoke"] = {{"status", "skipped"}, {"message", why}, {"gpus", json::array()}};
  };
  if (options.no_smoke) {
    skip("--no-smoke");
    return {};
  }
  auto r = run_smoke_on_entry(ctx, entry);
  if (!r) {
    Error e = r.error();
    e.code = ErrorCode::rolled_back;
    record_check(ctx, "smoke", "failed", e.message);
    return fail(e);
  }
  switch (r->outcome) {
  case smoke::Outcome::passed:
    ctx.action("smoke test passed: " + r->message);
    return {};
  case smoke::Outcome::skipped:
    if (options.require_gpu) {
      return fail(ErrorCode::rolled_back, "smoke test could not run on a GPU (" + r->message +
                                              ") and --require-gpu is set");
    }
    ctx.warn("smoke test skipped: " + r->message);
    return {};
  case smoke::Outcome::failed:
    break;
  }
  return fail(ErrorCode::rolled_back, "smoke test failed: " + r->message);
}

} // namespace cudnnctl::ops
