// SPDX-License-Identifier: Apache-2.0
#include "cli/output.hpp"

#include <cstdio>
#include <iostream>

namespace cudnnctl::cli {

using nlohmann::json;

namespace {

// An error is one line: control characters that came in with the input (a VERSION with a
// newline, a manifest value) are shown escaped, never as line breaks or terminal controls.
std::string one_line(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

} // namespace

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
                  {"message", one_line(error->full_message())}};
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
      std::cerr << "cudnnctl: error: " << one_line(error->full_message()) << "\n";
    }
  }
  return error ? exit_code(error->code) : 0;
}

} // namespace cudnnctl::cli
