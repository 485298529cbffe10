// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.hpp"
#include "doctor/compat.hpp"
#include "doctor/doctor.hpp"
#include "ops/doctor.hpp"
#include "ops/recommend.hpp"
#include "util/strings.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>

namespace cudnnctl::cli {

using nlohmann::json;

namespace {

json recall_lists_json(const recall::RecallSet& set) {
  json out = json::array();
  for (const auto& l : set.lists()) {
    out.push_back({{"path", l.path},
                   {"state", recall::state_name(l.state)},
                   {"message", l.message},
                   {"expires", l.expires ? json(*l.expires) : json(nullptr)},
                   {"recalls", l.recalls}});
  }
  return out;
}

void render(const ops::DoctorResult& r, Report& report) {
  report.outcome = r;
  if (!r.report) {
    return;
  }
  report.data() = doctor::to_json(*r.report);
  report.data()["recall_lists"] = r.recalls ? recall_lists_json(*r.recalls) : json(json::array());
  report.data()["compat_overlays"] = r.compat ? json(r.compat->overlays) : json(json::array());
  for (auto& line : doctor::render_text(*r.report, std::string(doctor::cudnnctl_version()))) {
    report.line(line);
  }
}

void render(const ops::RecommendResult& r, Report& report) {
  report.outcome = r;
  if (!r.recommendation) {
    return;
  }
  const auto& in = r.input;
  json data = doctor::to_json(*r.recommendation, in);
  json fws = json::array();
  for (const auto& f : in.frameworks) {
    fws.push_back({{"name", f.info->name},
                   {"spec", f.req.text},
                   {"versions", f.req.versions.describe()},
                   {"version", f.req.exact ? json(*f.req.exact) : json(nullptr)},
                   {"extras", f.req.extras}});
  }
  data["input"] = {
      {"frameworks", fws},
      {"workload", in.workload ? json(*in.workload) : json(nullptr)},
      {"cuda", in.cuda_major ? json(*in.cuda_major) : json(nullptr)},
      {"cuda_source", in.cuda_source},
      {"driver", in.driver ? json(*in.driver) : json(nullptr)},
      {"compute_capability", in.compute_capability ? json(*in.compute_capability) : json(nullptr)},
      {"compute_capability_source", !in.compute_capability ? json(nullptr) : json(in.gpus_source)},
      {"platform", in.platform},
      {"require_pin", in.require_pin},
      {"compat_overlays", r.compat.overlays},
      {"frameworks_found", r.from_node}};
  data["recall_lists"] = recall_lists_json(r.recalls);
  report.data() = std::move(data);
  if (!r.from_node.empty()) {
    report.line("frameworks found on this node (no --framework given): " +
                util::join(r.from_node, ", "));
  }
  for (auto& line : doctor::render_recommendation(*r.recommendation, in)) {
    report.line(line);
  }
}

} // namespace

void register_doctor(CLI::App& app, Action& action) {
  auto dargs = std::make_shared<ops::DoctorArgs>();
  auto* doctor = app.add_subcommand(
      "doctor", "Find every cuDNN, say which copy the loader uses and why, and report problems "
                "with a fix each (read-only; exit 8 when an error is found)");
  doctor->add_option("--scan", dargs->scan,
                     "Also inspect this venv, conda environment, site-packages or library "
                     "directory (inside --root; repeatable)");
  on_run(doctor, action, always_rendered(&ops::doctor, dargs, &render));

  auto rargs = std::make_shared<ops::RecommendArgs>();
  auto* recommend = app.add_subcommand(
      "recommend", "Advise a cuDNN release and CUDA variant from hard constraints (frameworks, "
                   "toolkit, driver, GPU) and workload preferences");
  recommend
      ->add_option("--framework", rargs->frameworks,
                   "A framework the release must serve, as pip writes it (torch==2.4.1, "
                   "'torch>=2.3,<2.6', tensorflow[and-cuda]~=2.18, jax, onnxruntime-gpu, "
                   "tensorrt==8.6.1; repeatable: several give a set of slots)")
      ->allow_extra_args(false);
  recommend->add_option("--workload", rargs->workload,
                        "cnn, rnn, transformer, recsys-sparse (or an alias: lstm, vit, bert, ...)");
  recommend->add_option("--compute-capability", rargs->compute_capability,
                        "The GPU's compute capability, e.g. 9.0");
  on_run(recommend, action, always_rendered(&ops::recommend, rargs, &render));
}

} // namespace cudnnctl::cli
