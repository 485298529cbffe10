// SPDX-License-Identifier: Apache-2.0
// Findings about installs that a signed recall list names.
#include "doctor/findings.hpp"

namespace cudnnctl::doctor {

namespace {

// The most precise version known: cudnnctl's entry metadata has the build number, the file
// names only the release.
std::optional<std::string> full_version(const Install& i) {
  return i.store_version.empty() ? i.version : std::optional<std::string>(i.store_version);
}

const recall::Recall* recall_of(const Install& i, const recall::RecallSet& recalls) {
  auto v = full_version(i);
  return v ? recalls.find_recall(*v, i.cuda_major) : nullptr;
}

std::string recall_words(const recall::Recall& hit) {
  return hit.reason + (hit.url.empty() ? "" : " (" + hit.url + ")") + " [recall list " + hit.list +
         "]";
}

// What replaces the active recalled entry: another store entry that is not recalled, else a
// new install; rollback when older generations exist.
std::string active_fix(const DoctorReport& r, const recall::RecallSet& recalls) {
  std::string use;
  bool older_generation = false; // of another entry that is not recalled
  for (const auto& i : r.installs) {
    if (i.store_entry.empty() || i.active || !full_version(i) || recall_of(i, recalls)) {
      continue;
    }
    if (use.empty()) {
      use = "`cudnnctl use " + *full_version(i) + "`";
    }
    older_generation = older_generation || !i.generations.empty();
  }
  if (use.empty()) {
    use = "`cudnnctl install VERSION` (`cudnnctl recommend` skips recalled releases)";
  }
  return "switch to a release that is not recalled: " + use +
         (older_generation ? ", or `cudnnctl rollback`" : "");
}

} // namespace

void add_recall_findings(DoctorReport& r, const recall::RecallSet& recalls) {
  if (recalls.recalls().empty()) {
    return;
  }
  for (const auto& i : r.installs) {
    const recall::Recall* hit = recall_of(i, recalls);
    if (!hit) {
      continue;
    }
    if (i.active) {
      add(r, "recalled-release", Severity::error,
          "cudnnctl's active cuDNN " + *full_version(i) + " is recalled: " + recall_words(*hit),
          {i.dir}, active_fix(r, recalls));
    } else {
      add(r, "recalled-release", Severity::warning,
          i.label() + " is recalled: " + recall_words(*hit), {i.dir},
          i.store_entry.empty() ? "replace this copy with a release that is not recalled"
                                : "remove the entry once nothing needs it: `cudnnctl remove " +
                                      *full_version(i) + "`");
    }
  }
}

} // namespace cudnnctl::doctor
