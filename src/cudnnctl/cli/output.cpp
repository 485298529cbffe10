// SPDX-License-Identifier: Apache-2.0
#include "cli/output.hpp"

#include <iostream>

namespace cudnnctl::cli {

using nlohmann::json;

json report_json(const ops::Report& report, const std::optional<Error>& error) {
  json j = {{"ok", !error.has_value()},
            {"changed", report.changed},
            {"command", report.command},
            {"active", ops::to_json(report.active)},
            {"previous", ops::to_json(report.previous)},
            {"actions", report.actions},
            {"warnings", report.warnings},
            {"data", report.data.is_object() ? report.data : json::object()}};
  if (error) {
    j["error"] = {{"code", code_name(error->code)},
                  {"exit_code", exit_code(error->code)},
                  {"message", error->full_message()}};
  }
  return j;
}

int print_outcome(bool as_json, bool quiet, const ops::Report& report,
                  const std::optional<Error>& error) {
  if (as_json) {
    std::cout << report_json(report, error).dump(2, ' ', false, json::error_handler_t::replace)
              << std::endl;
  } else {
    if (!quiet || error) {
      for (const auto& line : report.lines) {
        std::cout << line << "\n";
      }
      std::cout.flush();
    }
    if (error) {
      std::cerr << "cudnnctl: error: " << error->full_message() << "\n";
    }
  }
  return error ? exit_code(error->code) : 0;
}

} // namespace cudnnctl::cli
