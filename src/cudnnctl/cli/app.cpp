// SPDX-License-Identifier: Apache-2.0
#include "cli/app.hpp"

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "fetch/fetch.hpp"
#include "ops/adopt.hpp"
#include "ops/context.hpp"
#include "txn/transaction.hpp"
#include "util/signals.hpp"

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstring>
#include <iostream>

namespace cudnnctl::cli {

namespace {

constexpr const char* k_version = "0.1.0";

void add_global_options(CLI::App& app, ops::GlobalOptions& g) {
  app.add_option("--root", g.root, "Directory that stands for / (default /)");
  app.add_option("--prefix", g.prefix, "Install prefix inside the root (default /opt/cudnn)");
  app.add_flag("--json", g.json, "Print exactly one JSON object on stdout");
  app.add_option("--mirror", g.mirrors,
                 "Mirror base URL laid out like NVIDIA's redist server (repeatable, in order)")
      ->allow_extra_args(false);
  app.add_option("--manifest", g.manifest, "redistrib JSON file or URL to use");
  app.add_option("--cuda", g.cuda, "CUDA major of the build (default: the installed toolkit's)")
      ->check(CLI::Range(1, 99));
  app.add_option("--platform", g.platform, "linux-x86_64, linux-sbsa or linux-aarch64");
  app.add_option("--cacert", g.cacert, "CA bundle for HTTPS mirrors")->check(CLI::ExistingFile);
  app.add_flag("--dry-run", g.dry_run, "Plan only; write nothing");
  app.add_option("--lock-timeout", g.lock_timeout,
                 "Seconds to wait for another cudnnctl (default 300; 0 = fail at once)")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_flag("--require-pin", g.require_pin, "Refuse manifests without a pin");
  app.add_flag("--force", g.force,
               "Override compatibility refusals (CUDA major, driver) and recall refusals");
  app.add_flag("-q,--quiet", g.quiet, "Print only errors");
  app.add_flag("-v,--verbose", g.verbose, "More diagnostics (repeatable)");
}

bool argv_has_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      return true;
    }
  }
  return false;
}

std::string argv_line(int argc, char** argv) {
  std::string s;
  for (int i = 1; i < argc; ++i) {
    if (i > 1) {
      s += ' ';
    }
    s += argv[i];
  }
  return s;
}

// The first word that is neither an option nor an option's value: what the user meant as the
// command. Used to turn CLI11's "A subcommand is required" into "unknown command X".
std::string first_word(int argc, char** argv, const CLI::App& app) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("-", 0) == 0) {
      if (a.find('=') == std::string::npos) {
        const CLI::Option* opt = nullptr;
        try {
          opt = app.get_option_no_throw(a);
        } catch (...) {
        }
        if (opt && opt->get_type_size() != 0 && i + 1 < argc) {
          ++i;
        }
      }
      continue;
    }
    return a;
  }
  return {};
}

int run_parsed(CLI::App& app, ops::GlobalOptions& g, Action& action) {
  Report report;
  report.command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
  auto ctx = ops::make_context(g);
  if (!ctx) {
    return print_outcome(g.json, g.quiet, report, nullptr, ctx.error());
  }
  // SIGINT/SIGTERM/SIGHUP: one line saying what the interruption leaves (docs/RELIABILITY.md).
  util::install_interrupt_handlers(ctx->layout().journal_file());
  Status status = action(*ctx, report);
  std::optional<Error> error;
  if (!status) {
    error = status.error();
    // A failed command still says what is active now (the previous generation after a
    // rollback, the unchanged one after a refusal).
    if (!report.outcome.active) {
      (void)ops::fill_active(*ctx, report.outcome);
    }
  }
  return print_outcome(g.json, g.quiet, report, &ctx->notes(), error);
}

} // namespace

int run(int argc, char** argv) {
  // A write past RLIMIT_FSIZE must fail with EFBIG (and be undone), not kill the process.
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
  // `adopt --undo`'s part of a deactivation: the recovery at the start of any command may have
  // to finish one.
  txn::register_release_step(ops::adopted_release_step());
  ops::GlobalOptions g;
  g.argv_line = argv_line(argc, argv);
  Action action;
  CLI::App app("cudnnctl: transactional installer, upgrader and rollback manager for NVIDIA "
               "cuDNN",
               "cudnnctl");
  app.set_version_flag("--version", k_version);
  app.require_subcommand(1);
  add_global_options(app, g);
  register_install(app, action);
  register_switch(app, action);
  register_query(app, action);
  register_maintain(app, action);
  register_smoke(app, action);
  register_mirror(app, action);
  register_adopt(app, action);
  register_doctor(app, action);
  register_debug(app, action);
  register_check(app, action);
  register_bench(app, action);
  for (auto* sub : app.get_subcommands({})) {
    sub->fallthrough();
  }
  app.footer("Exit codes: 0 ok, 1 environment, 2 usage, 3 network, 4 integrity, 5 rolled back, "
             "6 busy, 7 requirement, 8 problems found.");
  bool json = argv_has_json(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    Report report;
    report.command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
    Error error(ErrorCode::usage, e.what());
    if (report.command.empty()) {
      std::string word = first_word(argc, argv, app);
      std::vector<std::string> names;
      for (const auto* sub : app.get_subcommands({})) {
        names.push_back(sub->get_name());
      }
      std::string list;
      for (const auto& n : names) {
        list += (list.empty() ? "" : ", ") + n;
      }
      error.message =
          (word.empty() ? "a command is required" : "unknown command \"" + word + "\"") +
          " (commands: " + list + ")";
    }
    if (!json) {
      error.message += " (see cudnnctl --help)";
    }
    return print_outcome(json, false, report, nullptr, error);
  }
  fetch::global_init();
  try {
    return run_parsed(app, g, action);
  } catch (const std::exception& e) {
    Report report;
    return print_outcome(json, false, report, nullptr,
                         Error(ErrorCode::internal, std::string("internal error: ") + e.what()));
  }
}

} // namespace cudnnctl::cli
