// SPDX-License-Identifier: Apache-2.0
// `recommend` as text for a person: the answer first (with sizes and why), what pip installs
// bring, the workload hint beside what the data says, then the rest grouped, and the
// constraints with their sources last.
#include "doctor/recommend.hpp"
#include "util/strings.hpp"

namespace cudnnctl::doctor {

namespace {

constexpr size_t k_shown_alternatives = 10;
constexpr size_t k_shown_labels = 12;

// "9.2.0 (9.2.0.82)", or just "8.9.7.29" when label and version are the same.
std::string name(const std::string& label, const std::string& version) {
  return label == version ? label : label + " (" + version + ")";
}

std::string archive_line(const Candidate& c, const std::string& platform) {
  std::string s = "cuDNN " + name(c.label, c.version) + " for CUDA " + std::to_string(c.cuda) +
                  " on " + platform;
  if (c.size) {
    s += ", archive " + size_text(*c.size);
  }
  std::vector<std::string> others;
  for (const auto& l : c.labels) {
    if (l != c.label) {
      others.push_back(l);
    }
  }
  if (!others.empty()) {
    s += "; the same archive is also published as label " + util::join(others, ", ");
  }
  return s;
}

void candidate_details(std::vector<std::string>& out, const Candidate& c, const char* indent) {
  for (const auto& s : c.serves) {
    out.push_back(std::string(indent) + "serves " + s.framework + ": " + s.detail);
  }
  for (const auto& w : c.why) {
    out.push_back(std::string(indent) + (w.starts_with("note:") ? "" : "why: ") + w);
  }
}

std::string labels_text(const std::vector<std::string>& labels) {
  if (labels.size() <= k_shown_labels) {
    return util::join(labels, ", ");
  }
  std::vector<std::string> head(labels.begin(), labels.begin() + k_shown_labels);
  return util::join(head, ", ") + ", ... (" + std::to_string(labels.size() - k_shown_labels) +
         " more)";
}

std::string group_line(const RejectionGroup& g) {
  size_t n = g.labels.size();
  std::string count = std::to_string(n) + (n == 1 ? " release" : " releases");
  std::string s = g.summary.starts_with("no ") ? count + (n == 1 ? " has " : " have ") + g.summary
                                               : count + ": " + g.summary;
  return s + (g.hint.empty() ? "" : ": " + g.hint);
}

std::string header(const RecommendInput& in) {
  std::vector<std::string> fws;
  for (const auto& f : in.frameworks) {
    fws.push_back(f.label());
  }
  std::string s = "cudnnctl recommend for " + in.platform;
  if (!fws.empty()) {
    s += ": " + util::join(fws, ", ");
  }
  s += "; CUDA toolkit " + (in.cuda_major
                                ? std::to_string(*in.cuda_major) + " (" + in.cuda_source + ")"
                                : std::string("not found"));
  s += "; driver " + in.driver.value_or("unknown");
  if (in.compute_capability) {
    s += "; compute capability " + *in.compute_capability + " (" + in.gpus_source + ")";
  }
  return s;
}

void render_answer(std::vector<std::string>& out, const Recommendation& rec,
                   const RecommendInput& in) {
  if (rec.slots.empty()) {
    out.push_back("Recommended: none. " + rec.conflict.value_or(Conflict{}).message + ".");
    if (rec.conflict && !rec.conflict->hint.empty()) {
      out.push_back("  " + rec.conflict->hint);
    }
    return;
  }
  if (rec.slots.size() == 1) {
    const auto& c = rec.slots.front().chosen;
    out.push_back("Recommended: " + archive_line(c, in.platform));
    candidate_details(out, c, "  ");
    out.push_back("  install: " + rec.slots.front().command);
    return;
  }
  out.push_back("Recommended: " + std::to_string(rec.slots.size()) +
                " releases side by side, one per slot (cuDNN major, CUDA major); no single "
                "release serves every framework:");
  for (const auto& s : rec.slots) {
    out.push_back("  slot cuDNN " + std::to_string(s.cudnn_major) + " / CUDA " +
                  std::to_string(s.cuda) + ": " + archive_line(s.chosen, in.platform));
    candidate_details(out, s.chosen, "    ");
    if (!s.alternatives.empty()) {
      std::vector<std::string> alts;
      for (const auto& a : s.alternatives) {
        alts.push_back(a.label);
      }
      out.push_back("    also fits this slot: " + labels_text(alts));
    }
  }
  out.push_back("  install:");
  for (const auto& s : rec.slots) {
    out.push_back("    " + s.command);
  }
  out.push_back(in.alongside_available
                    ? "  (--alongside activates a release in its own slot and keeps the others)"
                    : "  (--alongside activates a release in its own slot and keeps the others; "
                      "this cudnnctl build does not have it yet)");
}

void render_hint(std::vector<std::string>& out, const WorkloadHint& h) {
  out.push_back("Workload hint for --workload " + h.workload +
                " (a hint from the guide, not a requirement; " +
                (h.ranked ? "it ranked the recommendation above)" : "no release it names fits)"));
  out.push_back("  the guide: " + h.guide);
  for (const auto& c : h.claims) {
    out.push_back("  the guide says: " + c.claim);
    out.push_back("    " + c.data + (c.verdict == "not measured" ? "" : " (" + c.verdict + ")"));
  }
}

} // namespace

std::vector<std::string> render_recommendation(const Recommendation& rec,
                                               const RecommendInput& in) {
  std::vector<std::string> out;
  out.push_back(header(in));
  if (!rec.bundles.empty()) {
    out.push_back("");
    out.push_back("What the frameworks load:");
    for (const auto& b : rec.bundles) {
      out.push_back("  " + b.text);
      if (b.bundled && !b.system_for.empty()) {
        out.push_back("    the system install is then for: " + b.system_for);
      }
    }
  }
  out.push_back("");
  render_answer(out, rec, in);
  for (const auto& n : rec.notes) {
    out.push_back("  note: " + n);
  }
  if (rec.hint) {
    out.push_back("");
    render_hint(out, *rec.hint);
  }
  if (rec.slots.size() == 1) {
    out.push_back("");
    out.push_back("Alternatives that also meet every hard constraint (" +
                  std::to_string(rec.alternatives.size()) + "):");
    for (size_t i = 0; i < rec.alternatives.size() && i < k_shown_alternatives; ++i) {
      const auto& c = rec.alternatives[i];
      out.push_back("  " + name(c.label, c.version) + " CUDA " + std::to_string(c.cuda) +
                    (c.size ? ", " + size_text(*c.size) : "") + (c.pinned ? "" : ", not pinned"));
    }
    if (rec.alternatives.size() > k_shown_alternatives) {
      out.push_back("  ... and " + std::to_string(rec.alternatives.size() - k_shown_alternatives) +
                    " more (--json lists them all)");
    }
  }
  out.push_back("");
  out.push_back("Rejected (" + std::to_string(rec.rejected.size()) +
                (rec.rejected.size() == 1 ? " release):" : " releases):"));
  for (const auto& g : rec.groups) {
    out.push_back("  " + group_line(g));
    out.push_back("    " + labels_text(g.labels));
  }
  if (!rec.recalled.empty()) {
    out.push_back("");
    out.push_back("Skipped as recalled (" + std::to_string(rec.recalled.size()) + "):");
    for (const auto& r : rec.recalled) {
      out.push_back("  " + name(r.label, r.version) + " CUDA " + std::to_string(r.cuda) + ": " +
                    r.reason + (r.url.empty() ? "" : " (" + r.url + ")") + " [" + r.list + "]");
    }
  }
  out.push_back("");
  out.push_back("Hard constraints (a release that violates one is never recommended):");
  for (const auto& c : rec.constraints) {
    out.push_back("  - " + c.what + "  [" + c.source + "]");
  }
  out.push_back("Soft preferences (they only rank releases that meet every hard constraint):");
  for (const auto& p : rec.preferences) {
    out.push_back("  - " + p.what + (p.met ? "" : "  (not met)") + "  [" + p.source + "]");
  }
  return out;
}

} // namespace cudnnctl::doctor
