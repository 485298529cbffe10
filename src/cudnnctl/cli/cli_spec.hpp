// SPDX-License-Identifier: Apache-2.0
// The command line as data, read from the CLI11 definitions that `--help` prints: what the
// shell completions (`cudnnctl completion bash|zsh|fish`) and the man page (cudnnctl.1) are
// generated from, so that they cannot drift from the options the binary accepts.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cudnnctl::cli {

// --- Interface ---

struct OptionSpec {
  std::vector<std::string> names; // "-q", "--quiet"
  std::string value;              // the value's name ("DIR", "N": cli/help_text.hpp); empty: a flag
  std::vector<std::string> choices; // an IsMember check's values, else the known values
  std::string description;
  bool path = false; // the value is a file or directory
};

// What a command's positional arguments complete to.
enum class Positional { none, releases, installed, commands, shells };

struct CommandSpec {
  std::string name;
  std::string description;
  std::string footer;                 // the command's own footer (without the global options list)
  std::vector<std::string> arguments; // positional names, "VERSION", "[PATTERN]"
  Positional completes = Positional::none;
  std::vector<OptionSpec> options; // without --help
};

struct CliSpec {
  std::string description;
  std::vector<OptionSpec> globals;      // without --help, with --version
  std::vector<CommandSpec> commands;    // the visible ones, in registration order
  std::vector<std::string> cuda_majors; // known CUDA variants (completion of --cuda)
  std::vector<std::string> platforms;   // known platforms (completion of --platform)
};

// Reads `app` after every command is registered (hidden commands are left out; a footer is
// taken up to the global options list that every command's --help repeats).
CliSpec describe_cli(const CLI::App& app);

// The scripts and the page. bash: a function for `complete -F` (bash-completion's
// _init_completion when loaded); zsh: a #compdef function; fish: `complete` lines. Installed
// versions and known releases come at completion time from `cudnnctl completion --list`.
std::string bash_completion(const CliSpec& spec);
std::string zsh_completion(const CliSpec& spec);
std::string fish_completion(const CliSpec& spec);
// roff (man(7) macros) for section 1; `version` goes into the title line.
std::string man_page(const CliSpec& spec, const std::string& version);

} // namespace cudnnctl::cli
