// SPDX-License-Identifier: Apache-2.0
// What `--help`, the completions and the man page show for an option's value: a name a user
// understands (`--root DIR`, `--cuda N`, `--shell sh|fish|dockerfile`), never CLI11's type and
// validator text (`INT:INT in [1 - 99]`, `TEXT:FILE`, `Excludes: --undo`).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace cudnnctl::cli {

// --- Interface ---

// "TEXT:{sh,fish,dockerfile}" (an IsMember check's type name) -> {"sh", "fish", "dockerfile"};
// {} for any other type name.
std::vector<std::string> type_choices(const std::string& type_name);

// The value's name for `opt` of `command` ("" for the global options): from a table of the
// options cudnnctl has, else from the choices of an IsMember check ("a|b|c"), else N, NUMBER
// or VALUE by its type. "" for a flag and a positional argument (its name says it).
std::string metavar(const CLI::Option& opt, const std::string& command);

// Sets every option's help text (CLI11's option_text) of `app` and its commands to its metavar,
// with " ..." for a repeatable option and " (required)" for a required one.
void set_option_texts(CLI::App& app);

} // namespace cudnnctl::cli
