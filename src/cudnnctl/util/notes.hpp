// SPDX-License-Identifier: Apache-2.0
// What a command has to say while it runs, apart from its result: warnings, actions done, and
// progress. Domain code writes here; the CLI lists the warnings and actions in its output (the
// JSON "warnings" and "actions") next to what the command's result says.
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
};

class Notes {
public:
  explicit Notes(NoteStyle style = {}) : m_style(style) {}

  // A warning: kept once (a text already kept is dropped) and, in human mode without -q,
  // printed to stderr at once as "cudnnctl: warning: ...".
  void warn(const std::string& message);
  // Something done (or, under --dry-run, that would be done).
  void action(const std::string& what);
  // Progress or diagnostics on stderr (human mode, not -q). Level 1 needs -v, 2 needs -vv.
  void info(const std::string& message, int level = 0) const;

  [[nodiscard]] const std::vector<std::string>& warnings() const { return m_warnings; }
  [[nodiscard]] const std::vector<std::string>& actions() const { return m_actions; }

private:
  NoteStyle m_style;
  std::vector<std::string> m_warnings;
  std::vector<std::string> m_actions;
};

} // namespace cudnnctl::util
