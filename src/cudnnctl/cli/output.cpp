// SPDX-License-Identifier: Apache-2.0
#include "cli/output.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

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

json gen_json(const std::optional<store::GenInfo>& g) {
  if (!g) {
    return nullptr;
  }
  return json{{"version", g->version},
              {"cuda", g->cuda},
              {"platform", g->platform},
              {"generation", g->generation},
              {"path", g->path}};
}

} // namespace

Report::Report() : m_data(std::make_unique<json>(json::object())) {}
Report::~Report() = default;
Report::Report(Report&&) noexcept = default;
Report& Report::operator=(Report&&) noexcept = default;

json report_json(const Report& report, const util::Notes* notes,
                 const std::optional<Error>& error) {
  static const std::vector<std::string> none;
  json j = {{"ok", !error.has_value()},
            {"changed", report.outcome.changed},
            {"command", report.command},
            {"active", gen_json(report.outcome.active)},
            {"previous", gen_json(report.outcome.previous)},
            {"actions", notes ? notes->actions() : none},
            {"warnings", notes ? notes->warnings() : none},
            {"data", report.data().is_object() ? report.data() : json::object()}};
  if (!report.outcome.frameworks.empty()) {
    json frameworks = json::array();
    for (const auto& f : report.outcome.frameworks) {
      frameworks.push_back({{"name", f.name},
                            {"version", f.version},
                            {"path", f.path},
                            {"built_for", f.built_for},
                            {"would_load", f.would_load},
                            {"verdict", f.verdict},
                            {"why", f.why}});
    }
    j["data"]["frameworks"] = std::move(frameworks);
  }
  if (error) {
    j["error"] = {{"code", code_name(error->code)},
                  {"category", code_name(category(error->code))},
                  {"exit_code", exit_code(error->code)},
                  {"message", one_line(error->full_message())}};
  }
  return j;
}

int print_outcome(bool as_json, bool quiet, const Report& report, const util::Notes* notes,
                  const std::optional<Error>& error) {
  if (as_json) {
    std::cout
        << report_json(report, notes, error).dump(2, ' ', false, json::error_handler_t::replace)
        << std::endl;
  } else {
    if (!quiet || error) {
      if (notes && notes->style().dry_run) {
        // The plan: the steps the command would take, in order (the same list as the JSON
        // "actions"), with what -v adds.
        const auto& steps = notes->steps();
        if (!steps.empty()) {
          std::cout << "plan (--dry-run: nothing is changed):\n";
        }
        for (size_t i = 0; i < steps.size(); ++i) {
          std::cout << "  " << i + 1 << ". " << steps[i].text << "\n";
          if (notes->style().verbose >= 1) {
            for (const auto& d : steps[i].detail) {
              std::cout << "       " << d << "\n";
            }
          }
        }
      }
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
