// SPDX-License-Identifier: Apache-2.0
// `adopt`, `backup`, `restore`, `env`.
#include "cli/commands.hpp"
#include "cli/render.hpp"
#include "ops/adopt.hpp"
#include "ops/backup.hpp"
#include "ops/env.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>

namespace cudnnctl::cli {

namespace {

using nlohmann::json;

void render(const ops::AdoptResult& r, bool dry_run, Report& report) {
  report.outcome = r;
  auto& data = report.data();
  if (const auto& f = r.found) {
    data["cuda_home"] = f->home;
    data["version"] = f->version;
    data["version_source"] = f->version_source;
    data["entry"] = f->entry;
    data["files"] = f->files;
    data["defects"] = f->defects;
    data["left_alone"] = f->left_alone;
  }
  if (r.backup) {
    data["backup"] = *r.backup;
  }
  if (!r.homes_found.empty()) {
    json homes = json::array();
    for (const auto& f : r.homes_found) {
      json h = {{"cuda_home", f.home},
                {"version", f.version.empty() ? json(nullptr) : json(f.version)},
                {"entry", f.entry.empty() ? json(nullptr) : json(f.entry)},
                {"files", f.files.size()},
                {"generation", nullptr}};
      for (const auto& a : r.homes_adopted) {
        if (a.home == f.home) {
          h["generation"] = a.generation ? json(*a.generation) : json(nullptr);
          h["backup"] = a.backup;
        }
      }
      homes.push_back(std::move(h));
    }
    data["homes"] = std::move(homes);
  }
  using Said = ops::AdoptResult::Said;
  switch (r.said) {
  case Said::none:
    break;
  case Said::nothing_to_adopt:
    report.line("nothing to adopt in " + r.found->home +
                (dry_run ? ""
                         : std::string(": no cuDNN files there that cudnnctl does not manage") +
                               (r.repaired ? " (CUDA-home links repaired)" : "")));
    break;
  case Said::would_adopt:
    report.line("would adopt cuDNN " + r.found->version + " from " + r.found->home + " (" +
                std::to_string(r.found->files.size()) + " files) as " + r.found->entry);
    break;
  case Said::adopted:
    for (const auto& a :
         r.homes_adopted.empty() ? std::vector<ops::Adopted>{*r.adopted} : r.homes_adopted) {
      report.line("adopted cuDNN " + a.version + " from " + a.home + " (" +
                  std::to_string(a.files) + " files) as generation " +
                  std::to_string(a.generation.value_or(0)) + "; originals backed up to " +
                  a.backup);
    }
    break;
  case Said::would_put_back:
    report.line("would put back " + std::to_string(r.originals) +
                " adopted originals and deactivate cudnnctl");
    break;
  case Said::put_back:
    data["restored"] = r.restored;
    report.line("put the adopted originals back (" + std::to_string(r.restored.size()) +
                " files) and deactivated cudnnctl; `cudnnctl use VERSION` activates a stored "
                "build again");
    break;
  }
}

void render(const ops::BackupResult& r, Report& report) {
  report.outcome = r;
  auto& data = report.data();
  data["backup"] = r.file;
  if (!r.written) {
    report.line("would back up generation " + std::to_string(r.generation) + " to " + r.file);
    return;
  }
  data["sha256_list"] = r.file + ".sha256";
  data["entry"] = r.entry;
  data["generation"] = r.generation;
  data["files"] = r.files;
  report.line("backed up generation " + std::to_string(r.generation) + " (cuDNN " + r.version +
              ") to " + r.file);
}

void render(const ops::RestoreResult& r, Report& report) {
  report.outcome = r;
  if (r.entry.empty()) {
    return;
  }
  auto& data = report.data();
  data["entry"] = r.entry;
  data["backup_kind"] = r.kind;
  data["version"] = r.version;
  put_findings(r.findings, report);
  switch (r.said) {
  case ops::Switched::none:
    break;
  case ops::Switched::would_activate:
  case ops::Switched::would_not_change:
    report.line((r.said == ops::Switched::would_activate ? "would restore cuDNN "
                                                         : "already active: cuDNN ") +
                r.version + " from " + r.file + " as " + r.entry);
    break;
  case ops::Switched::already_active:
    report.line("cuDNN " + r.described + " from this backup is already active; nothing to do");
    break;
  case ops::Switched::activated:
    report.line("restored cuDNN " + r.version + " from " + r.file + " as generation " +
                std::to_string(r.generation.value_or(0)) + " (" + r.entry + ")");
    break;
  }
}

void render(const ops::EnvResult& r, Report& report) {
  auto& data = report.data();
  if (!r.run_line.empty()) {
    report.line(r.run_line);
  }
  for (const auto& v : r.vars) {
    data[v.name] = v.value;
    report.line(ops::shell_assignment(r.shell, v.name, v.value, v.prepend));
  }
  data["pkg_config_path"] =
      r.pkg_config_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.pkg_config_path);
  data["entry_path"] = r.entry_path;
  if (!r.slot.empty()) {
    data["slot"] = r.slot;
  }
  data["shell"] = r.shell;
}

} // namespace

void register_adopt(CLI::App& app, Action& action) {
  auto ao = std::make_shared<ops::AdoptOptions>();
  auto* adopt = app.add_subcommand(
      "adopt", "Take over a hand-made cuDNN in the CUDA home: back it up, import it as a "
               "generation, replace the files by links into the store");
  adopt->add_option("--cuda-home", ao->cuda_home,
                    "CUDA home inside the root (default: config cuda_home, /usr/local/cuda; with "
                    "several cuda_homes: every one, or this one of them)");
  adopt->add_flag("--undo", ao->undo,
                  "Put the adopted originals back at their paths and deactivate cudnnctl");
  on_run(adopt, action, dry_run_rendered(&ops::adopt, ao, &render));

  auto bo = std::make_shared<ops::BackupOptions>();
  auto* backup = app.add_subcommand(
      "backup", "Write a tarball of the active generation (with a sha256 list inside and beside)");
  backup->add_option("--output", bo->output,
                     "Tarball to write (.tar.zst or .tar.gz; default under "
                     "/var/lib/cudnnctl/backups/)");
  on_run(backup, action, [bo](ops::Context& ctx, Report& report) {
    ops::BackupResult r;
    Status st = ops::backup(ctx, *bo, r);
    if (st) {
      render(r, report);
    } else {
      report.outcome = r;
    }
    return st;
  });

  auto ro = std::make_shared<ops::RestoreOptions>();
  auto* restore = app.add_subcommand(
      "restore", "Verify a backup, import it as a new store entry and switch to it");
  restore->add_option("FILE", ro->file, "Backup tarball (from `backup` or `adopt`)")->required();
  on_run(restore, action, always_rendered(&ops::restore, ro, &render));

  auto eo = std::make_shared<ops::EnvOptions>();
  auto* env = app.add_subcommand(
      "env", "Print CUDNN_PATH, CUDNN_ROOT, CUDNN_INCLUDE_DIR, CUDNN_LIB_DIR, CUDNN_LIBRARY, "
             "CUDNN_INSTALL_PATH, TF_CUDNN_VERSION for build systems (read-only)");
  env->add_option(
         "--shell", eo->shell,
         "Syntax: sh (default), fish, or dockerfile (the RUN line that installs the active "
         "build and its ENV lines, with the paths inside --root)")
      ->check(CLI::IsMember({"sh", "fish", "dockerfile"}));
  env->add_flag("--ld-library-path", eo->ld_library_path,
                "Also print LD_LIBRARY_PATH naming the active store entry's lib/ (breaks "
                "pip-installed PyTorch's own cuDNN: a warning says so)");
  env->add_option("--slot", eo->slot,
                  "The variables of this slot's active entry (e.g. 8-cuda12, as `status` lists "
                  "them), naming its store path, instead of the primary slot's");
  on_run(env, action, [eo](ops::Context& ctx, Report& report) {
    ops::EnvResult r;
    Status st = ops::env(ctx, *eo, r);
    report.outcome = r;
    if (st) {
      render(r, report);
    }
    return st;
  });
}

} // namespace cudnnctl::cli
