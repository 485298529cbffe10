// SPDX-License-Identifier: Apache-2.0
#include "cli/render.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace cudnnctl::cli {

using nlohmann::json;

namespace {

json requirements_json(const gates::Requirements& r) {
  json j = json::object();
  if (r.checked) {
    if (const auto& tk = r.cuda_toolkit) {
      j["cuda_toolkit"] = {{"major", tk->major},
                           {"minor", tk->minor},
                           {"home", tk->home.string()},
                           {"source", tk->source}};
    } else {
      j["cuda_toolkit"] = nullptr;
    }
    j["driver"] = r.driver ? json(*r.driver) : json(nullptr);
    j["driver_minimum"] = r.driver_minimum ? json(*r.driver_minimum) : json(nullptr);
  }
  if (r.gpus) {
    j["gpus"] = smoke::to_json(*r.gpus)["gpus"];
  }
  if (!r.gpu_arch.empty()) {
    json arch = json::array();
    for (const auto& v : r.gpu_arch) {
      arch.push_back({{"gpu", v.gpu.index},
                      {"name", v.gpu.name},
                      {"compute_capability", v.gpu.compute_capability},
                      {"verdict", gpu::verdict_name(v.verdict)},
                      {"message", v.message},
                      {"source", v.source}});
    }
    j["gpu_arch"] = arch;
  }
  return j;
}

std::string describe_gpu(const smoke::GpuResult& g) {
  std::string s = "GPU " + std::to_string(g.gpu) + " (" + g.name +
                  (g.compute_capability.empty() ? "" : ", sm " + g.compute_capability) +
                  "): " + g.status;
  if (g.max_error) {
    char buf[48];
    std::snprintf(buf, sizeof buf, ", max error %.3g", *g.max_error);
    s += buf;
  }
  char ms[32];
  std::snprintf(ms, sizeof ms, ", %.0f ms", g.ms);
  s += ms;
  if (g.status != "passed" && !g.message.empty()) {
    s += ": " + g.message;
  }
  return s;
}

} // namespace

json recall_json(const recall::Recall& r) {
  return {{"version", r.version},
          {"cuda", r.cuda ? json(*r.cuda) : json(nullptr)},
          {"reason", r.reason},
          {"url", r.url},
          {"list", r.list}};
}

void put_findings(const gates::Findings& f, Report& report) {
  auto& data = report.data();
  if (!f.checks.empty()) {
    json checks = json::array();
    for (const auto& c : f.checks) {
      checks.push_back({{"name", c.name}, {"status", c.status}, {"message", c.message}});
    }
    data["checks"] = checks;
  }
  if (f.requirements.checked || f.requirements.gpus) {
    data["requirements"] = requirements_json(f.requirements);
  }
  if (f.recalled) {
    data["recalled"] = recall_json(*f.recalled);
  }
  if (f.validation) {
    data["validation"] = {{"gate", f.validation->gate}, {"problems", f.validation->problems}};
  }
  if (const auto& g = f.perf_gate) {
    json pg = {{"percent", g->pct},
               {"status", g->status},
               {"message", g->message},
               {"baseline", g->baseline},
               {"candidate", g->candidate},
               {"baseline_entry", g->baseline_entry},
               {"candidate_entry", g->candidate_entry},
               {"compared", g->compared},
               {"slower", g->slower}};
    json run = json::parse(g->run_json, nullptr, false);
    pg["bench"] = run.is_discarded() ? json(nullptr) : run;
    data["perf_gate"] = pg;
  }
  if (f.smoke) {
    data["smoke"] = smoke::to_json(*f.smoke);
  } else if (f.smoke_off) {
    data["smoke"] = {{"status", "skipped"}, {"message", *f.smoke_off}, {"gpus", json::array()}};
  }
}

void smoke_lines(const gates::Findings& f, Report& report, Skipped skipped) {
  if (!f.smoke) {
    return;
  }
  for (const auto& g : f.smoke->gpus) {
    report.line("smoke test: " + describe_gpu(g));
  }
  // A skipped test was said once, by its warning on stderr (issue 19: not twice).
  if (f.smoke->gpus.empty() &&
      (skipped == Skipped::say || f.smoke->outcome != smoke::Outcome::skipped)) {
    report.line(std::string("smoke test: ") + smoke::outcome_name(f.smoke->outcome) + ": " +
                f.smoke->message);
  }
}

void say_active(const ops::Outcome& outcome, Report& report) {
  if (const auto& a = outcome.active) {
    report.line("cuDNN " + a->version + " (CUDA " + std::to_string(a->cuda) + ", " + a->platform +
                ") is active as generation " + std::to_string(a->generation) + ": " + a->path);
  }
}

void put_switch(const ops::SwitchResult& r, Report& report) {
  put_findings(r.findings, report);
  smoke_lines(r.findings, report);
  switch (r.said) {
  case ops::Switched::none:
    break;
  case ops::Switched::activated:
    if (const auto& a = r.slot_active; a && !r.slot.empty()) {
      report.line("cuDNN " + a->version + " (CUDA " + std::to_string(a->cuda) + ", " + a->platform +
                  ") is active alongside in slot " + r.slot + " as generation " +
                  std::to_string(a->generation) + ": " + a->path);
      report.data()["slot"] = r.slot;
      break;
    }
    say_active(r, report);
    break;
  case ops::Switched::already_active:
    report.line("cuDNN " + r.described + " is already active; nothing to do");
    break;
  case ops::Switched::would_activate:
    report.line("would activate " + r.entry);
    break;
  case ops::Switched::would_not_change:
    report.line(r.entry + " is already active; nothing to do");
    break;
  }
}

void put_dpkg(const std::vector<ops::DpkgPackage>& packages, Report& report) {
  if (packages.empty()) {
    return;
  }
  json list = json::array();
  for (const auto& p : packages) {
    list.push_back({{"name", p.name}, {"version", p.version}, {"held", p.held}});
  }
  report.data()["dpkg_cudnn_packages"] = list;
}

} // namespace cudnnctl::cli
