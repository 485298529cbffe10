// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "cli/render.hpp"
#include "ops/install.hpp"
#include "util/strings.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>

namespace cudnnctl::cli {

namespace {

void render(const ops::InstallResult& r, Report& report) {
  report.outcome = r;
  auto& data = report.data();
  if (r.requested) {
    data["requested"] = *r.requested;
  }
  if (!r.entry.empty()) {
    data["entry"] = r.entry;
  }
  if (r.version) {
    data["version"] = *r.version;
  }
  if (const auto& a = r.archive) {
    data["archive"] = {{"version", a->version}, {"cuda", a->cuda},     {"platform", a->platform},
                       {"url", a->url},         {"sha256", a->sha256}, {"size", a->size}};
    if (!a->form.empty()) {
      data["archive"]["form"] = a->form;
      data["archive"]["form_reason"] = a->form_reason;
    }
    if (const auto& p = a->repack) {
      data["archive"]["repack"] = {{"url", p->url},
                                   {"sha256", p->sha256},
                                   {"size", p->size},
                                   {"format", "tar.zst"},
                                   {"sidecar_url", p->sidecar_url},
                                   {"sidecar_sha256", p->sidecar_sha256}};
    }
  }
  if (r.components) {
    data["components"] = *r.components;
  }
  if (r.cache_bytes) {
    data["cache"] = {{"bytes", *r.cache_bytes}, {"kept", r.cache_kept}};
  }
  put_dpkg(r.adoption.dpkg, report);
  if (r.adoption.backup) {
    data["backup"] = *r.adoption.backup;
  }
  if (const auto& a = r.adoption.adopted) {
    data["adopted"] = {{"version", a->version},
                       {"entry", a->entry},
                       {"generation", a->generation ? nlohmann::json(*a->generation) : nullptr},
                       {"backup", a->backup}};
    // Said as a step when it happened, before the install's own (ops/adopt.cpp).
  }
  switch (r.install_said) {
  case ops::InstallResult::Said::would_install:
    put_findings(r.findings, report);
    report.line("would install and activate cuDNN " + r.version.value_or("") + " (CUDA " +
                std::to_string(r.cuda) + ", " + r.platform + ")");
    if (const auto& a = r.archive; a && !a->form.empty()) {
      report.line(a->form == "repack"
                      ? "from the mirror's repack " + (a->repack ? a->repack->url : a->url) + " (" +
                            a->form_reason + ")"
                      : "from NVIDIA's archive " + a->url + " (" + a->form_reason + ")");
    }
    return;
  case ops::InstallResult::Said::would_not_change:
    put_findings(r.findings, report);
    report.line("cuDNN " + r.version.value_or("") + " is already active; nothing to do");
    return;
  case ops::InstallResult::Said::switched:
    break;
  }
  if (r.said == ops::Switched::already_active && r.active_generation) {
    put_findings(r.findings, report);
    report.line("cuDNN " + r.described + " is already active (generation " +
                std::to_string(*r.active_generation) + "); nothing to do");
    return;
  }
  put_switch(r, report);
  // The cache's size and where it is: the summary line after this one (cli/app.cpp).
  if (r.cache_bytes && r.said == ops::Switched::activated && !r.cache_kept) {
    report.line("download cache: this archive not kept (--no-cache or config keep_cache = "
                "false)");
  }
}

} // namespace

void register_install(CLI::App& app, Action& action) {
  auto o = std::make_shared<ops::InstallOptions>();
  auto components = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("install", "Download, verify and activate a cuDNN release");
  cmd->add_option("VERSION", o->version,
                  "Release label (9.2.0), full version (9.2.0.82), latest, or a prefix (9, 9.2): "
                  "the newest the mirrors offer for this CUDA and platform; may be left out "
                  "with --archive (taken from NVIDIA's file name)");
  cmd->add_option("--archive", o->archive,
                  "Use this local archive, verified against the mirrors' manifest, --manifest, "
                  "or offline against NVIDIA's manifest shipped with cudnnctl; a site mirror's "
                  "repack (.tar.zst) only through its sidecar pinned by the site");
  cmd->add_option("--sidecar", o->sidecar,
                  "The sidecar of --archive FILE.tar.zst (default: <sha256>.json beside it or "
                  "cudnnctl-repack/<sha256>.json in its directory or the two above)");
  cmd->add_option("--components", *components,
                  "Comma-separated: runtime, headers, static (default runtime,headers)");
  add_switch_flags(cmd, o->no_smoke, o->alongside, o->require_gpu);
  cmd->add_option("--perf-gate", o->perf_gate,
                  "After the switch, bench the new entry against the previous one (quick set); "
                  "slower by more than PCT % on any workload: rolled back (exit 5)")
      ->check(CLI::Range(0.1, 100.0));
  cmd->add_flag("--no-cache", o->no_cache,
                "Keep nothing in the download cache (/var/cache/cudnnctl; --user: "
                "~/.cache/cudnnctl) afterwards: for container images (default: config "
                "keep_cache, true)");
  on_run(cmd, action, [o, components](ops::Context& ctx, Report& report) -> Status {
    ops::InstallOptions opts = *o;
    if (!opts.perf_gate && ctx.config().perf_gate) {
      opts.perf_gate = *ctx.config().perf_gate;
    }
    if (!components->empty()) {
      TRY_ASSIGN(opts.components, ops::parse_components(*components));
    }
    ops::InstallResult r;
    Status st = ops::install(ctx, opts, r);
    render(r, report);
    return st;
  });
}

} // namespace cudnnctl::cli
