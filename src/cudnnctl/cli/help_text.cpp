// SPDX-License-Identifier: Apache-2.0
#include "cli/help_text.hpp"

#include "util/strings.hpp"

#include <CLI/CLI.hpp>
#include <map>

namespace cudnnctl::cli {

namespace {

// The long name's value name, where the type alone says too little.
const std::map<std::string, std::string>& named() {
  static const std::map<std::string, std::string> m = {
      {"--root", "DIR"},         {"--prefix", "DIR"},
      {"--mirror", "URL"},       {"--manifest", "FILE|URL"},
      {"--cuda", "N"},           {"--platform", "PLATFORM"},
      {"--cacert", "FILE"},      {"--lock-timeout", "SECONDS"},
      {"--archive", "FILE"},     {"--sidecar", "FILE"},
      {"--components", "LIST"},  {"--perf-gate", "PCT"},
      {"--slot", "SLOT"},        {"--keep", "N"},
      {"--cuda-home", "DIR"},    {"--output", "FILE"},
      {"--scan", "DIR"},         {"--framework", "PKG==VERSION"},
      {"--workload", "NAME"},    {"--compute-capability", "X.Y"},
      {"--expect", "VERSION"},   {"--prometheus", "FILE"},
      {"--nfd", "FILE"},         {"--versions", "LIST"},
      {"--baseline", "VERSION"}, {"--gpus", "LIST"},
      {"--workloads", "LIST"},   {"--batch", "N"},
      {"--iterations", "N"},     {"--from", "FILE"},
      {"--csv", "FILE"},         {"--plot", "FILE"},
      {"--report", "FILE"},
  };
  return m;
}

} // namespace

std::vector<std::string> type_choices(const std::string& type_name) {
  auto open = type_name.find('{');
  auto close = type_name.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return {};
  }
  std::vector<std::string> out;
  for (const auto& c : util::split(type_name.substr(open + 1, close - open - 1), ',')) {
    if (auto t = util::trim(c); !t.empty()) {
      out.emplace_back(t);
    }
  }
  return out;
}

std::string metavar(const CLI::Option& opt, const std::string& command) {
  if (opt.get_items_expected_min() == 0 || opt.get_positional()) {
    return "";
  }
  const std::string type = opt.get_type_name();
  if (auto choices = type_choices(type); !choices.empty()) {
    return util::join(choices, "|");
  }
  const auto& lnames = opt.get_lnames();
  const std::string longest = lnames.empty() ? std::string() : "--" + lnames.back();
  if (longest == "--to") {
    return command == "rollback" ? "GENERATION|ENTRY" : "DIR";
  }
  if (auto it = named().find(longest); it != named().end()) {
    return it->second;
  }
  const std::string base = type.substr(0, type.find(':'));
  if (base == "INT" || base == "UINT") {
    return "N";
  }
  if (base == "FLOAT") {
    return "NUMBER";
  }
  return "VALUE";
}

void set_option_texts(CLI::App& app) {
  auto tidy = [](CLI::App& a, const std::string& command) {
    for (auto* opt : a.get_options({})) {
      std::string text = metavar(*opt, command);
      if (text.empty()) {
        if (opt->get_positional() || !opt->get_excludes().empty() || !opt->get_needs().empty()) {
          opt->option_text(" "); // its name alone; no "TEXT", no "Excludes: ..."
        }
        continue;
      }
      if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) {
        text += " ...";
      }
      if (opt->get_required()) {
        text += " (required)";
      }
      opt->option_text(text);
    }
  };
  tidy(app, "");
  for (auto* sub : app.get_subcommands({})) {
    tidy(*sub, sub->get_name());
  }
}

} // namespace cudnnctl::cli
