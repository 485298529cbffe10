// SPDX-License-Identifier: Apache-2.0
#include "util/notes.hpp"

#include <algorithm>
#include <iostream>

namespace cudnnctl::util {

void Notes::warn(const std::string& message) {
  if (std::find(m_warnings.begin(), m_warnings.end(), message) != m_warnings.end()) {
    return;
  }
  m_warnings.push_back(message);
  if (m_style.human && !m_style.quiet) {
    std::cerr << "cudnnctl: warning: " << message << "\n";
  }
}

void Notes::action(const std::string& what) {
  m_actions.push_back(what);
}

void Notes::info(const std::string& message, int level) const {
  if (m_style.human && !m_style.quiet && m_style.verbose >= level) {
    std::cerr << message << "\n";
  }
}

} // namespace cudnnctl::util
