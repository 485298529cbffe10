// SPDX-License-Identifier: Apache-2.0
// What a command has to say while it runs, apart from its result: warnings, actions done, and
// progress. Domain code writes here; the CLI lists the warnings and actions in its output (the
// JSON "warnings" and "actions") next to what the command's result says. The actions are the
// command's steps: in human mode they are printed on stderr as they happen ("* adopted ...");
// under --dry-run they are the plan, which the CLI prints on stdout (cli/output.hpp).
#pragma once

#include <string>
#include <vector>

namespace cudnnctl::util {

// --- Interface ---

// How notes are shown while the command runs (from --json, -q, -v).
struct NoteStyle {
  bool human = true; // false under --json: nothing is printed, everything is kept
  bool quiet = false;
  int verbose = 0;
  bool dry_run = false; // actions are the plan: kept, printed by the CLI at the end
};

// One step a command took (or, under --dry-run, would take): the line, and what -v adds
// (the facts --json holds in its data: full URL, exact bytes, every file).
struct Step {
  std::string text;
  std::vector<std::string> detail;
};

class Notes {
public:
  explicit Notes(NoteStyle style = {}) : m_style(style) {}

  // A warning: kept once (a text already kept is dropped) and, in human mode without -q,
  // printed to stderr at once as "cudnnctl: warning: ...".
  void warn(const std::string& message);
  // A warning that stands for many (one per file): in human mode one line, `summary`, with
  // `details` below it under -v; --json keeps every detail as its own warning.
  void warn_many(const std::string& summary, const std::vector<std::string>& details);
  // Something done (or, under --dry-run, that would be done): a step. In human mode without
  // -q and --dry-run, printed to stderr at once as "* what" (its detail below under -v).
  void action(const std::string& what, std::vector<std::string> detail = {});
  // Progress or diagnostics on stderr (human mode, not -q). Level 1 needs -v, 2 needs -vv.
  void info(const std::string& message, int level = 0) const;

  [[nodiscard]] const std::vector<std::string>& warnings() const { return m_warnings; }
  [[nodiscard]] const std::vector<std::string>& actions() const { return m_actions; }
  [[nodiscard]] const std::vector<Step>& steps() const { return m_steps; }
  [[nodiscard]] const NoteStyle& style() const { return m_style; }

private:
  NoteStyle m_style;
  std::vector<std::string> m_warnings;
  std::vector<std::string> m_actions;
  std::vector<Step> m_steps; // m_actions with their detail
};

} // namespace cudnnctl::util
