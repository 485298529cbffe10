// SPDX-License-Identifier: Apache-2.0
// Printing a finished command: the contract's single JSON object, or human lines.
#pragma once

#include "ops/context.hpp"

#include <optional>

namespace cudnnctl::cli {

// --- Interface ---

// The --json object of the contract for `report`, with "error" when `error` is set.
nlohmann::json report_json(const ops::Report& report, const std::optional<Error>& error);

// Prints the outcome (JSON on stdout, or human lines on stdout and the error on stderr) and
// returns the exit code.
int print_outcome(bool json, bool quiet, const ops::Report& report,
                  const std::optional<Error>& error);

} // namespace cudnnctl::cli
