// SPDX-License-Identifier: Apache-2.0
// `recommend --json`: data.* (docs/DOCTOR.md lists the keys).
#include "doctor/recommend.hpp"

#include <nlohmann/json.hpp>

namespace cudnnctl::doctor {

using nlohmann::json;

namespace {

json candidate(const Candidate& c, const std::string& platform) {
  json serves = json::array();
  for (const auto& s : c.serves) {
    serves.push_back({{"framework", s.framework}, {"builds", s.detail}});
  }
  return json{{"label", c.label},
              {"version", c.version},
              {"labels", c.labels},
              {"cuda", c.cuda},
              {"platform", platform},
              {"pinned", c.pinned},
              {"size", c.size ? json(*c.size) : json(nullptr)},
              {"sha256", c.sha256.empty() ? json(nullptr) : json(c.sha256)},
              {"why", c.why},
              {"serves", serves},
              {"install", "cudnnctl install " + c.label + " --cuda " + std::to_string(c.cuda)}};
}

json constraints(const std::vector<Constraint>& v, bool with_met) {
  json out = json::array();
  for (const auto& c : v) {
    json j{{"what", c.what}, {"source", c.source}};
    if (with_met) {
      j["met"] = c.met;
    }
    out.push_back(std::move(j));
  }
  return out;
}

} // namespace

json to_json(const Recommendation& rec, const RecommendInput& in) {
  const std::string& p = in.platform;
  json slots = json::array(), commands = json::array();
  for (const auto& s : rec.slots) {
    json alts = json::array();
    for (const auto& a : s.alternatives) {
      alts.push_back(candidate(a, p));
    }
    slots.push_back(
        {{"slot", "cudnn" + std::to_string(s.cudnn_major) + "-cuda" + std::to_string(s.cuda)},
         {"cudnn_major", s.cudnn_major},
         {"cuda", s.cuda},
         {"release", candidate(s.chosen, p)},
         {"frameworks", s.frameworks},
         {"command", s.command},
         {"alternatives", alts}});
    commands.push_back(s.command);
  }
  json alts = json::array(), rej = json::array(), groups = json::array(), recalled = json::array();
  for (const auto& c : rec.alternatives) {
    alts.push_back(candidate(c, p));
  }
  for (const auto& r : rec.rejected) {
    rej.push_back({{"label", r.label},
                   {"version", r.version},
                   {"reasons", r.reasons},
                   {"summary", r.summary}});
  }
  for (const auto& g : rec.groups) {
    groups.push_back({{"reason", g.summary},
                      {"kind", g.kind},
                      {"hint", g.hint.empty() ? json(nullptr) : json(g.hint)},
                      {"count", g.labels.size()},
                      {"releases", g.labels}});
  }
  for (const auto& r : rec.recalled) {
    recalled.push_back({{"label", r.label},
                        {"version", r.version},
                        {"cuda", r.cuda},
                        {"reason", r.reason},
                        {"url", r.url.empty() ? json(nullptr) : json(r.url)},
                        {"list", r.list}});
  }
  json bundled = json::array();
  for (const auto& b : rec.bundles) {
    bundled.push_back({{"framework", b.framework},
                       {"brings_own_cudnn", b.bundled},
                       {"text", b.text},
                       {"system_for", b.system_for},
                       {"source", b.source}});
  }
  json hint = nullptr;
  if (rec.hint) {
    json claims = json::array();
    for (const auto& c : rec.hint->claims) {
      claims.push_back({{"claim", c.claim}, {"data", c.data}, {"verdict", c.verdict}});
    }
    hint = {{"workload", rec.hint->workload},
            {"guide", rec.hint->guide},
            {"source", rec.hint->source},
            {"ranked", rec.hint->ranked},
            {"claims", claims}};
  }
  json conflict = nullptr;
  if (rec.conflict) {
    conflict = {{"constraints", rec.conflict->constraints},
                {"message", rec.conflict->message},
                {"hint", rec.conflict->hint.empty() ? json(nullptr) : json(rec.conflict->hint)}};
  }
  const Candidate* top = rec.recommended();
  return json{{"recommended", top ? candidate(*top, p) : json(nullptr)},
              {"slots", slots},
              {"commands", commands},
              {"alternatives", alts},
              {"rejected", rej},
              {"rejected_groups", groups},
              {"recalled", recalled},
              {"conflict", conflict},
              {"bundled", bundled},
              {"notes", rec.notes},
              {"hint", hint},
              {"constraints", constraints(rec.constraints, false)},
              {"preferences", constraints(rec.preferences, true)}};
}

} // namespace cudnnctl::doctor
