// SPDX-License-Identifier: Apache-2.0
// `adopt`, `backup`, `restore`, `env`.
#include "cli/commands.hpp"
#include "ops/adopt.hpp"
#include "ops/backup.hpp"
#include "ops/env.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace cudnnctl::cli {

void register_adopt(CLI::App& app, Action& action) {
  auto ao = std::make_shared<ops::AdoptOptions>();
  auto* adopt = app.add_subcommand(
      "adopt", "Take over a hand-made cuDNN in the CUDA home: back it up, import it as a "
               "generation, replace the files by links into the store");
  adopt->add_option("--cuda-home", ao->cuda_home,
                    "CUDA home inside the root (default: config cuda_home, /usr/local/cuda)");
  adopt->add_flag("--undo", ao->undo,
                  "Put the adopted originals back at their paths and deactivate cudnnctl");
  adopt->callback(
      [ao, &action] { action = [ao](ops::Context& ctx) { return ops::adopt(ctx, *ao); }; });

  auto bo = std::make_shared<ops::BackupOptions>();
  auto* backup = app.add_subcommand(
      "backup", "Write a tarball of the active generation (with a sha256 list inside and beside)");
  backup->add_option("--output", bo->output,
                     "Tarball to write (.tar.zst or .tar.gz; default under "
                     "/var/lib/cudnnctl/backups/)");
  backup->callback(
      [bo, &action] { action = [bo](ops::Context& ctx) { return ops::backup(ctx, *bo); }; });

  auto ro = std::make_shared<ops::RestoreOptions>();
  auto* restore = app.add_subcommand(
      "restore", "Verify a backup, import it as a new store entry and switch to it");
  restore->add_option("FILE", ro->file, "Backup tarball (from `backup` or `adopt`)")->required();
  restore->callback(
      [ro, &action] { action = [ro](ops::Context& ctx) { return ops::restore(ctx, *ro); }; });

  auto eo = std::make_shared<ops::EnvOptions>();
  auto* env = app.add_subcommand(
      "env", "Print CUDNN_PATH, CUDNN_INCLUDE_DIR, CUDNN_LIBRARY for build systems (read-only)");
  env->add_option("--shell", eo->shell, "Syntax: sh (default) or fish")
      ->check(CLI::IsMember({"sh", "fish"}));
  env->add_flag("--ld-library-path", eo->ld_library_path,
                "Also print LD_LIBRARY_PATH naming the active store entry's lib/");
  env->callback([eo, &action] { action = [eo](ops::Context& ctx) { return ops::env(ctx, *eo); }; });
}

} // namespace cudnnctl::cli
