// SPDX-License-Identifier: Apache-2.0
// What the CLI prints for a finished command: the contract's single JSON object, or human
// lines. Each command's renderer (cmd_*.cpp) fills a Report from the command's result.
#pragma once

#include "ops/context.hpp"
#include "util/notes.hpp"

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::cli {

// --- Interface ---

class Report {
public:
  Report();
  ~Report();
  Report(Report&&) noexcept;
  Report& operator=(Report&&) noexcept;

  std::string command;
  ops::Outcome outcome;           // "changed", "active", "previous"
  std::vector<std::string> lines; // human result lines for stdout

  // "data": the command's own keys (an object).
  nlohmann::json& data() { return *m_data; }
  const nlohmann::json& data() const { return *m_data; }
  void line(std::string text) { lines.push_back(std::move(text)); }

private:
  std::unique_ptr<nlohmann::json> m_data;
};

// The --json object of the contract for `report` with the warnings and actions of `notes`
// (none when null), and "error" when `error` is set.
nlohmann::json report_json(const Report& report, const util::Notes* notes,
                           const std::optional<Error>& error);

// Prints the outcome (JSON on stdout, or human lines on stdout and the error on stderr) and
// returns the exit code. Under --dry-run the human lines start with the plan: the steps of
// `notes`, numbered, their detail under -v.
int print_outcome(bool json, bool quiet, const Report& report, const util::Notes* notes,
                  const std::optional<Error>& error);

} // namespace cudnnctl::cli
