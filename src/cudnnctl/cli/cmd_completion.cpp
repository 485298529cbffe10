// SPDX-License-Identifier: Apache-2.0
// `completion bash|zsh|fish|man`: the shell completion scripts and the man page, generated
// from the option definitions (cli/cli_spec.hpp); `completion --list installed|releases`:
// the words the scripts complete VERSION with, at completion time.
#include "cli/cli_spec.hpp"
#include "cli/commands.hpp"
#include "ops/catalog.hpp"
#include "ops/version.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace cudnnctl::cli {

namespace {

// Installed labels and full versions (quietly none when the store cannot be read: a
// completion must not print errors into the user's command line).
std::vector<std::string> completion_installed(ops::Context& ctx) {
  std::set<std::string> words;
  if (auto view = ops::read_store(ctx)) {
    for (const auto& e : view->entries) {
      words.insert(e.version);
      if (!e.label.empty()) {
        words.insert(e.label);
      }
    }
  }
  return {words.begin(), words.end()};
}

std::vector<std::string> completion_releases() {
  std::vector<std::string> words = {"latest"};
  std::set<std::string> majors;
  for (const auto& r : ops::builtin_catalog()) {
    words.push_back(r.label);
    majors.insert(r.label.substr(0, r.label.find('.')));
  }
  words.insert(words.end(), majors.begin(), majors.end());
  return words;
}

} // namespace

void register_completion(CLI::App& app, Action& action) {
  auto shell = std::make_shared<std::string>();
  auto list = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "completion", "Print the shell completion script (bash, zsh, fish) or the man page (man)");
  cmd->add_option("SHELL", *shell, "bash, zsh, fish, or man (the cudnnctl.1 page in roff)")
      ->check(CLI::IsMember({"bash", "zsh", "fish", "man"}));
  cmd->add_option("--list", *list,
                  "Print the words VERSION completes to, one a line: installed (under --root) "
                  "or releases (the known ones, latest and the majors)")
      ->check(CLI::IsMember({"installed", "releases"}));
  cmd->footer("bash: source <(cudnnctl completion bash), or install it as "
              "/usr/share/bash-completion/completions/cudnnctl (cmake --install does).\n"
              "zsh: cudnnctl completion zsh > \"${fpath[1]}/_cudnnctl\". fish: cudnnctl "
              "completion fish > ~/.config/fish/completions/cudnnctl.fish.\n"
              "man: cudnnctl completion man > cudnnctl.1; man -l cudnnctl.1.");
  on_run(cmd, action, [shell, list, &app](ops::Context& ctx, Report& report) -> Status {
    if (shell->empty() == list->empty()) {
      return fail(ErrorCode::usage, "completion takes a SHELL (bash, zsh, fish or man) or "
                                    "--list installed|releases");
    }
    std::string text;
    if (!list->empty()) {
      auto words = *list == "installed" ? completion_installed(ctx) : completion_releases();
      report.data()["words"] = words;
      for (const auto& w : words) {
        report.line(w);
      }
      return {};
    }
    CliSpec spec = describe_cli(app);
    text = *shell == "bash"   ? bash_completion(spec)
           : *shell == "zsh"  ? zsh_completion(spec)
           : *shell == "fish" ? fish_completion(spec)
                              : man_page(spec, ops::build_version());
    report.data()["script"] = text;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      report.line(line);
    }
    return {};
  });
}

} // namespace cudnnctl::cli
