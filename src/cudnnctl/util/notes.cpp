// SPDX-License-Identifier: Apache-2.0
#include "util/notes.hpp"

#include "util/progress.hpp"

#include <algorithm>
#include <iostream>

namespace cudnnctl::util {

void Notes::warn(const std::string& message) {
  if (std::find(m_warnings.begin(), m_warnings.end(), message) != m_warnings.end()) {
    return;
  }
  m_warnings.push_back(message);
  if (m_style.human && !m_style.quiet) {
    clear_progress_line();
    std::cerr << "cudnnctl: warning: " << message << "\n";
  }
}

void Notes::warn_many(const std::string& summary, const std::vector<std::string>& details) {
  bool fresh = false;
  for (const auto& d : details) {
    if (std::find(m_warnings.begin(), m_warnings.end(), d) == m_warnings.end()) {
      m_warnings.push_back(d);
      fresh = true;
    }
  }
  if (!fresh || !m_style.human || m_style.quiet) {
    return;
  }
  clear_progress_line();
  std::cerr << "cudnnctl: warning: " << summary << "\n";
  if (m_style.verbose >= 1) {
    for (const auto& d : details) {
      std::cerr << "  - " << d << "\n";
    }
  }
}

void Notes::action(const std::string& what, std::vector<std::string> detail) {
  m_actions.push_back(what);
  if (m_style.human && !m_style.quiet && !m_style.dry_run) {
    clear_progress_line();
    std::cerr << "* " << what << "\n";
    if (m_style.verbose >= 1) {
      for (const auto& d : detail) {
        std::cerr << "    " << d << "\n";
      }
    }
  }
  m_steps.push_back(Step{what, std::move(detail)});
}

void Notes::info(const std::string& message, int level) const {
  if (m_style.human && !m_style.quiet && m_style.verbose >= level) {
    clear_progress_line();
    std::cerr << message << "\n";
  }
}

} // namespace cudnnctl::util
