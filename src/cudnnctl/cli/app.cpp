// SPDX-License-Identifier: Apache-2.0
#include "cli/app.hpp"

#include "cli/commands.hpp"
#include "cli/help_text.hpp"
#include "cli/output.hpp"
#include "core/signals.hpp"
#include "fetch/fetch.hpp"
#include "ops/adopt.hpp"
#include "ops/context.hpp"
#include "ops/plan.hpp"
#include "ops/version.hpp"
#include "release/catalog.hpp"
#include "txn/transaction.hpp"
#include "util/hooks.hpp"
#include "util/lock.hpp"
#include "util/strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unistd.h>

namespace cudnnctl::cli {

namespace {

void add_global_options(CLI::App& app, ops::GlobalOptions& g) {
  app.add_option("--root", g.root, "Directory that stands for / (default /)");
  app.add_option("--prefix", g.prefix,
                 "Install prefix inside the root (default /opt/cudnn); one root serves one prefix: "
                 "another prefix's build in the loader drop-in refuses changes here");
  app.add_flag("--json", g.json, "Print exactly one JSON object on stdout");
  app.add_option("--mirror", g.mirrors,
                 "Mirror base URL laid out like NVIDIA's redist server (repeatable, in order)")
      ->allow_extra_args(false);
  app.add_option("--manifest", g.manifest, "redistrib JSON file or URL to use");
  app.add_option(
         "--cuda", g.cuda,
         "CUDA major of the build (default: the installed toolkit's, else the active build's)")
      ->check(CLI::Range(1, 99));
  app.add_option("--platform", g.platform, "linux-x86_64, linux-sbsa or linux-aarch64");
  app.add_option("--cacert", g.cacert, "CA bundle for HTTPS mirrors")->check(CLI::ExistingFile);
  app.add_flag("--dry-run", g.dry_run, "Plan only; write nothing");
  app.add_option("--lock-timeout", g.lock_timeout,
                 "Seconds to wait for another cudnnctl (default 300; 0 = fail at once)")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_flag("--require-pin", g.require_pin, "Refuse manifests without a pin");
  app.add_flag("--force", g.force,
               "Override compatibility refusals (CUDA major, driver), recall refusals and the "
               "framework gate (a switch that would break a framework on the node)");
  app.add_flag("--user", g.user,
               "Non-root mode: prefix, state, cache and config under the XDG directories of "
               "the user; no /etc writes, no loader drop-in, no CUDA-home links");
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
        if (opt && opt->get_items_expected_min() > 0 && i + 1 < argc) {
          ++i;
        }
      }
      continue;
    }
    return a;
  }
  return {};
}

// Commands a user may type: hidden ones (group "") are never offered.
std::vector<std::string> visible_commands(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands({})) {
    if (!sub->get_group().empty()) {
      names.push_back(sub->get_name());
    }
  }
  return names;
}

// " (did you mean install?)" for a mistyped command, or "".
std::string command_hint(const std::string& word, const std::vector<std::string>& names) {
  auto close = release::did_you_mean(word, names);
  return close.empty() ? "" : " (did you mean " + util::join(close, " or ") + "?)";
}

// An option neither cudnnctl nor `command` has (`install --no-smok`): "unknown option
// --no-smok (did you mean --no-smoke?)", or "" when every option is known.
std::string unknown_option(int argc, char** argv, const CLI::App& app, const std::string& command) {
  const CLI::App* sub = nullptr;
  for (const auto* s : app.get_subcommands({})) {
    if (s->get_name() == command) {
      sub = s;
    }
  }
  std::vector<std::string> names;
  for (const CLI::App* a : {&app, sub}) {
    if (a == nullptr) {
      continue;
    }
    for (const CLI::Option* o : a->get_options()) {
      for (const auto& l : o->get_lnames()) {
        names.push_back("--" + l);
      }
    }
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      break;
    }
    if (!a.starts_with("--")) {
      continue;
    }
    std::string name = a.substr(0, a.find('='));
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      auto close = release::did_you_mean(name, names);
      return "unknown option " + name +
             (close.empty() ? "" : " (did you mean " + util::join(close, " or ") + "?)") +
             (command.empty() ? "" : " for `cudnnctl " + command + "`");
    }
  }
  return {};
}

// An option of a command given before the command (`cudnnctl --no-smoke install`): the
// command it belongs to, or "".
std::string misplaced_option(int argc, char** argv, const CLI::App& app) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("-", 0) != 0) {
      return {}; // the command: what follows it is its own
    }
    std::string name = a.substr(0, a.find('='));
    if (const CLI::Option* global = app.get_option_no_throw(name)) {
      if (a.find('=') == std::string::npos && global->get_items_expected_min() > 0) {
        ++i; // its value
      }
      continue;
    }
    for (const auto* sub : app.get_subcommands({})) {
      if (!sub->get_group().empty() && sub->get_option_no_throw(name) != nullptr) {
        return name + " is an option of `" + sub->get_name() +
               "`, not a global option: put it after the command (cudnnctl " + sub->get_name() +
               " ... " + name + ")";
      }
    }
  }
  return {};
}

// The global options as `--help` of every command shows them: from the same definitions.
std::string global_options_text(const CLI::App& app) {
  std::string out = "Global options (before or after the command):\n";
  for (const auto* opt : app.get_options()) {
    std::string name = opt->get_name(false, true);
    if (name == "--help" || name == "-h,--help" || name == "--version" || name.empty()) {
      continue;
    }
    std::string left =
        "  " + name +
        (opt->get_items_expected_min() > 0 ? " " + std::string(util::trim(opt->get_option_text()))
                                           : "");
    left.resize(std::max<size_t>(left.size() + 1, 30), ' ');
    out += left + opt->get_description() + "\n";
  }
  return out;
}

const std::map<std::string, std::string>& examples() {
  static const std::map<std::string, std::string> m = {
      {"install", "cudnnctl install 9.2.0 --dry-run; cudnnctl --cuda 12 install latest; "
                  "cudnnctl install --archive ./cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"},
      {"use", "cudnnctl use 8.9.7"},
      {"rollback", "cudnnctl rollback; cudnnctl rollback --to 3; cudnnctl rollback --undo"},
      {"search", "cudnnctl search 9; cudnnctl --cuda 13 search latest"},
      {"remove", "cudnnctl remove 9.1.0"},
      {"gc", "cudnnctl gc --keep 2 --cache --dry-run"},
      {"env", "eval \"$(cudnnctl env)\""},
      {"mirror", "cudnnctl mirror 9.2.0 8.9.7 --to /srv/cudnn-mirror"},
      {"help", "cudnnctl help install"},
      {"purge", "cudnnctl purge --dry-run; cudnnctl purge --yes"},
      {"completion", "source <(cudnnctl completion bash); cudnnctl completion man > cudnnctl.1"},
      {"list", "cudnnctl list; cudnnctl list --available 9"},
  };
  return m;
}

// The commands that change what the loader serves: the framework gate runs in each.
const std::set<std::string>& switching_commands() {
  static const std::set<std::string> names = {"install", "use",   "rollback",
                                              "restore", "adopt", "purge"};
  return names;
}

// --scan DIR on every switching command: more places the framework gate searches.
void add_scan_options(CLI::App& app, ops::GlobalOptions& g) {
  for (auto* sub : app.get_subcommands({})) {
    if (switching_commands().contains(sub->get_name())) {
      sub->add_option("--scan", g.scan,
                      "A directory the framework gate also searches for frameworks (a "
                      "site-packages, an environment, a directory of environments), inside the "
                      "root, as the config's framework_paths; repeatable");
    }
  }
}

// Every visible command's --help ends with the global options and an example.
void add_help_footers(CLI::App& app) {
  std::string globals = global_options_text(app);
  for (auto* sub : app.get_subcommands({})) {
    if (sub->get_group().empty()) {
      continue;
    }
    std::string footer = sub->get_footer();
    if (!footer.empty()) {
      footer += "\n\n";
    }
    if (switching_commands().contains(sub->get_name())) {
      footer += "The framework gate: refused (exit 7, framework_incompatible) before anything "
                "changes when a framework on the node (torch, TensorFlow, JAX, ONNX Runtime, "
                "TensorRT, in the standard site-packages, conda environments and the config's "
                "framework_paths) could not load the cuDNN the loader serves afterwards" +
                std::string(sub->get_name() == "adopt" ? " (adopt --undo)" : "") +
                "; --dry-run shows each verdict, --force switches with a warning.\n\n";
    }
    footer += globals;
    if (auto it = examples().find(sub->get_name()); it != examples().end()) {
      footer += "\nExample: " + it->second + "\n";
    }
    footer += "\nExit codes: `cudnnctl --help` lists them; `man cudnnctl` also each --json "
              "error.code.";
    sub->footer(footer);
  }
}

int print_version(bool json) {
  ops::VersionInfo v = ops::version_info();
  if (json) {
    nlohmann::json libs = nlohmann::json::object();
    for (const auto& [name, version] : v.libraries) {
      libs[name] = version;
    }
    std::cout
        << nlohmann::json{{"version", v.version}, {"commit", v.commit}, {"libraries", libs}}.dump(2)
        << std::endl;
    return 0;
  }
  std::string libs;
  for (const auto& [name, version] : v.libraries) {
    libs += (libs.empty() ? "" : ", ") + name + " " + version;
  }
  std::cout << "cudnnctl " << v.version << " (commit " << v.commit << ")\n" << libs << std::endl;
  return 0;
}

// `--help` (of the program or of a command): the text, or under --json one object whose
// data.help holds it.
int print_help(bool json, const std::string& text) {
  if (!json) {
    std::cout << text;
    return 0;
  }
  Report report;
  report.command = "help";
  report.data()["help"] = text;
  return print_outcome(true, false, report, nullptr, std::nullopt);
}

void register_help(CLI::App& app, Action& action) {
  auto topic = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("help", "Show the help of cudnnctl or of one command");
  cmd->add_option("COMMAND", *topic, "The command to explain");
  on_run(cmd, action, [topic, &app](ops::Context&, Report& report) -> Status {
    const CLI::App* about = &app;
    if (!topic->empty()) {
      about = nullptr;
      for (const auto* sub : app.get_subcommands({})) {
        if (!sub->get_group().empty() && sub->get_name() == *topic) {
          about = sub;
        }
      }
      if (!about) {
        return fail(ErrorCode::usage, "unknown command \"" + *topic + "\"" +
                                          command_hint(*topic, visible_commands(app)) +
                                          " (commands: " + util::join(visible_commands(app), ", ") +
                                          ")");
      }
    }
    // The formatter directly: App::help() would describe the selected command (help).
    std::string text = about->get_formatter()->make_help(
        about, about == &app ? "cudnnctl" : "cudnnctl " + about->get_name(),
        CLI::AppFormatMode::Normal);
    report.data()["help"] = text;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      report.line(line);
    }
    return {};
  });
}

// The commands that end with a summary line when they changed something (ops/plan.hpp).
bool is_mutating(const std::string& command) {
  for (const char* c :
       {"install", "use", "rollback", "adopt", "remove", "gc", "restore", "recover", "purge"}) {
    if (command == c) {
      return true;
    }
  }
  return false;
}

int run_parsed(CLI::App& app, ops::GlobalOptions& g, Action& action) {
  Report report;
  report.command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
  auto ctx = ops::make_context(g);
  if (!ctx) {
    return print_outcome(g.json, g.quiet, report, nullptr, ctx.error());
  }
  // SIGINT/SIGTERM/SIGHUP: one line saying what the interruption leaves (docs/RELIABILITY.md).
  core::install_interrupt_handlers(ctx->layout().journal_file());
  // A wait for another cudnnctl is never silent: who holds the lock and since when at once,
  // then a line every few seconds on a terminal (or with -v).
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  util::set_lock_wait_reporter([&ctx, tty, verbose = g.verbose](const util::LockWait& w) {
    auto secs = [](std::chrono::milliseconds ms) {
      return std::to_string((ms.count() + 500) / 1000) + " s";
    };
    if (w.first) {
      ctx->notes().info("cudnnctl: waiting for the lock " + w.path.string() + ", held by " +
                        w.holder + " (up to " + secs(w.timeout) + ": --lock-timeout)");
    } else if (tty || verbose > 0) {
      ctx->notes().info("cudnnctl: still waiting for the lock, " + secs(w.waited) + " of " +
                        secs(w.timeout) + ": held by " + w.holder);
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  // Every network try is a line under -v; a mirror skipped for the next is a warning.
  fetch::set_reporter(
      {[&ctx](const std::string& line) { ctx->notes().info("cudnnctl: " + line, 1); },
       [&ctx](const std::string& warning) { ctx->notes().warn(warning); }});
  // Another prefix's build in the loader drop-in: every mutating command but recover is
  // refused before it looks at anything (issue 34, F15); lock() checks again under the lock.
  Status status = report.command != "recover" && is_mutating(report.command)
                      ? ops::check_loader_owner(*ctx)
                      : Status{};
  if (status) {
    status = action(*ctx, report);
  }
  util::set_lock_wait_reporter(nullptr);
  fetch::set_reporter({});
  std::optional<Error> error;
  if (!status) {
    error = status.error();
    // A failed command still says what is active now (the previous generation after a
    // rollback, the unchanged one after a refusal).
    if (!report.outcome.active) {
      (void)ops::fill_active(*ctx, report.outcome);
    }
  }
  if (!error && !g.json && !g.dry_run && report.outcome.changed && is_mutating(report.command)) {
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    report.line(ops::summary_line(*ctx, dt.count()));
  }
  return print_outcome(g.json, g.quiet, report, &ctx->notes(), error);
}

} // namespace

void on_run(CLI::App* cmd, Action& action, Action run) {
  cmd->callback([&action, run = std::move(run)] { action = run; });
}

int run(int argc, char** argv) {
  // A write past RLIMIT_FSIZE must fail with EFBIG (and be undone), not kill the process.
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
  // An interrupt says what it leaves from the command's first instruction on (issue 34, F16: a
  // signal in its first milliseconds, before the options were parsed, killed it without the
  // line); run_parsed names the journal once the layout is known.
  core::install_interrupt_handlers({});
  (void)util::hook("startup"); // test hook: a pause here is an interrupt before anything else
  // `adopt --undo`'s part of a deactivation: the recovery at the start of any command may have
  // to finish one.
  txn::register_release_step(ops::adopted_release_step());
  ops::GlobalOptions g;
  g.argv_line = argv_line(argc, argv);
  Action action;
  CLI::App app("cudnnctl: transactional installer, upgrader and rollback manager for NVIDIA "
               "cuDNN",
               "cudnnctl");
  app.set_version_flag("--version", ops::build_version(),
                       "Print the version, the commit and the libraries' versions (with --json: "
                       "one object)");
  app.require_subcommand(1);
  add_global_options(app, g);
  register_install(app, action);
  register_switch(app, action);
  register_query(app, action);
  register_search(app, action);
  register_maintain(app, action);
  register_smoke(app, action);
  register_mirror(app, action);
  register_adopt(app, action);
  register_doctor(app, action);
  register_debug(app, action);
  register_check(app, action);
  register_bench(app, action);
  register_help(app, action);
  register_completion(app, action);
  add_scan_options(app, g);
  set_option_texts(app);
  add_help_footers(app);
  for (auto* sub : app.get_subcommands({})) {
    sub->fallthrough();
  }
  app.footer("Example: cudnnctl install 9.2.0; cudnnctl rollback; cudnnctl status; "
             "cudnnctl help install\n\n"
             "Exit codes: 0 ok, 1 environment, 2 usage, 3 network, 4 integrity, 5 rolled back, "
             "6 busy, 7 requirement, 8 problems found.");
  bool json = argv_has_json(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return print_help(json, app.help());
  } catch (const CLI::CallForAllHelp&) {
    return print_help(json, app.help("", CLI::AppFormatMode::All));
  } catch (const CLI::CallForVersion&) {
    return print_version(json);
  } catch (const CLI::ParseError& e) {
    Report report;
    report.command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
    Error error(ErrorCode::usage, e.what());
    if (std::string misplaced = misplaced_option(argc, argv, app); !misplaced.empty()) {
      error.message = misplaced;
    } else if (std::string unknown = unknown_option(argc, argv, app, report.command);
               !unknown.empty()) {
      error.message = unknown;
    } else if (report.command.empty()) {
      std::string word = first_word(argc, argv, app);
      std::vector<std::string> names = visible_commands(app);
      error.message =
          (word.empty() ? "a command is required"
                        : "unknown command \"" + word + "\"" + command_hint(word, names)) +
          " (commands: " + util::join(names, ", ") + ")";
    }
    if (!json) {
      error.message += " (see cudnnctl --help)";
    }
    return print_outcome(json, false, report, nullptr, error);
  }
  try {
    return run_parsed(app, g, action);
  } catch (const std::exception& e) {
    Report report;
    return print_outcome(json, false, report, nullptr,
                         Error(ErrorCode::internal, std::string("internal error: ") + e.what()));
  }
}

} // namespace cudnnctl::cli
