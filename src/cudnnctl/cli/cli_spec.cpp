// SPDX-License-Identifier: Apache-2.0
#include "cli/cli_spec.hpp"

#include "cli/help_text.hpp"
#include "host/host.hpp"
#include "ops/catalog.hpp"
#include "util/strings.hpp"

#include <CLI/CLI.hpp>
#include <set>

namespace cudnnctl::cli {

namespace {

// Options whose value names a file or a directory (completed with file names); rollback's --to
// names a generation.
bool spec_is_path_option(const std::string& longest, const std::string& command) {
  if (longest == "--to" && command == "rollback") {
    return false;
  }
  static const std::set<std::string> paths = {
      "--root",   "--prefix",    "--manifest", "--cacert", "--archive",
      "--output", "--to",        "--csv",      "--plot",   "--prometheus",
      "--nfd",    "--cuda-home", "--report",   "--scan",   "--from-file"};
  return paths.count(longest) > 0;
}

OptionSpec spec_option(const CLI::Option& opt, const CliSpec& spec, const std::string& command) {
  OptionSpec o;
  for (const auto& s : opt.get_snames()) {
    o.names.push_back("-" + s);
  }
  for (const auto& l : opt.get_lnames()) {
    o.names.push_back("--" + l);
  }
  o.description = opt.get_description();
  if (opt.get_items_expected_min() > 0) {
    o.choices = type_choices(opt.get_type_name());
    o.value = metavar(opt, command);
    const std::string& longest = o.names.empty() ? std::string() : o.names.back();
    o.path = spec_is_path_option(longest, command);
    if (longest == "--cuda") {
      o.choices = spec.cuda_majors;
    } else if (longest == "--platform") {
      o.choices = spec.platforms;
    }
  }
  return o;
}

Positional spec_positional(const std::string& command) {
  if (command == "install" || command == "mirror" || command == "search") {
    return Positional::releases;
  }
  if (command == "use" || command == "remove") {
    return Positional::installed;
  }
  if (command == "help") {
    return Positional::commands;
  }
  if (command == "completion") {
    return Positional::shells;
  }
  return Positional::none;
}

} // namespace

CliSpec describe_cli(const CLI::App& app) {
  CliSpec spec;
  spec.description = app.get_description();
  std::set<int> cudas;
  std::set<std::string> platforms;
  for (const auto& rel : ops::builtin_catalog()) {
    for (const auto& [platform, builds] : rel.archives) {
      if (host::is_supported_platform(platform)) { // not linux-ppc64le: install refuses it
        platforms.insert(platform);
      }
      for (const auto& [cuda, archive] : builds) {
        cudas.insert(cuda);
      }
    }
  }
  for (int c : cudas) {
    spec.cuda_majors.push_back(std::to_string(c));
  }
  spec.platforms.assign(platforms.begin(), platforms.end());
  for (const auto* opt : app.get_options()) {
    if (!opt->get_positional() && opt->get_name() != "--help") {
      spec.globals.push_back(spec_option(*opt, spec, ""));
    }
  }
  for (const auto* sub : app.get_subcommands({})) {
    if (sub->get_group().empty()) {
      continue; // hidden
    }
    CommandSpec c;
    c.name = sub->get_name();
    c.description = sub->get_description();
    c.footer = sub->get_footer();
    if (auto cut = c.footer.find("Global options (before"); cut != std::string::npos) {
      c.footer = std::string(util::trim(c.footer.substr(0, cut)));
    }
    c.completes = spec_positional(c.name);
    for (const auto* opt : sub->get_options()) {
      if (opt->get_name() == "--help") {
        continue;
      }
      if (opt->get_positional()) {
        std::string name = opt->get_name();
        c.arguments.push_back(opt->get_required() ? name : "[" + name + "]");
        continue;
      }
      c.options.push_back(spec_option(*opt, spec, c.name));
    }
    spec.commands.push_back(std::move(c));
  }
  return spec;
}

} // namespace cudnnctl::cli
