// SPDX-License-Identifier: Apache-2.0
// A bench Run as JSON, and back (recorded runs are test data: tests/data/bench/).
#include "bench/render.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace cudnnctl::bench {

namespace {

using nlohmann::json;

double ratio_to(const Run& run, const Sample& s, const std::string& baseline) {
  for (const auto& b : run.samples) {
    if (b.version == baseline && b.gpu == s.gpu && b.workload == s.workload && b.throughput > 0 &&
        s.throughput > 0) {
      return s.throughput / b.throughput;
    }
  }
  return 0;
}

json item_json(const Item& i) {
  return {{"item", i.item},
          {"pass", i.pass},
          {"shape", i.shape},
          {"count", i.count},
          {"status", i.status},
          {"ms", i.ms},
          {"iterations", i.iterations},
          {"first_call_ms", i.first_call_ms},
          {"workspace_bytes", i.workspace_bytes},
          {"flops", i.flops},
          {"detail", i.detail},
          {"message", i.message}};
}

} // namespace

std::vector<std::string> versions_of(const Run& run) {
  std::vector<std::string> v;
  for (const auto& s : run.samples) {
    if (std::find(v.begin(), v.end(), s.version) == v.end()) {
      v.push_back(s.version);
    }
  }
  return v;
}

std::string baseline_of(const Run& run, const std::string& wanted) {
  auto v = versions_of(run);
  if (std::find(v.begin(), v.end(), wanted) != v.end()) {
    return wanted;
  }
  return v.empty() ? std::string() : v.front();
}

std::string render_json(const Run& run, const std::string& wanted) {
  std::string baseline = baseline_of(run, wanted);
  json samples = json::array();
  json gpus = json::array();
  std::vector<int> seen;
  for (const auto& s : run.samples) {
    if (std::find(seen.begin(), seen.end(), s.gpu) == seen.end() && !s.gpu_name.empty()) {
      seen.push_back(s.gpu);
      gpus.push_back({{"gpu", s.gpu},
                      {"name", s.gpu_name},
                      {"compute_capability", s.compute_capability},
                      {"uuid", s.uuid},
                      {"memory_bytes", s.gpu_memory_bytes},
                      {"driver_version", s.driver_version},
                      {"kernel_driver", s.kernel_driver},
                      {"sm_clock_max_mhz", s.sm_clock_max_mhz},
                      {"mem_clock_max_mhz", s.mem_clock_max_mhz}});
    }
    json items = json::array();
    for (const auto& i : s.items) {
      items.push_back(item_json(i));
    }
    double r = ratio_to(run, s, baseline);
    samples.push_back({{"version", s.version},
                       {"shim", s.shim},
                       {"cudnn_version", s.cudnn_version},
                       {"gpu", s.gpu},
                       {"gpu_name", s.gpu_name},
                       {"compute_capability", s.compute_capability},
                       {"uuid", s.uuid},
                       {"gpu_memory_bytes", s.gpu_memory_bytes},
                       {"driver_version", s.driver_version},
                       {"kernel_driver", s.kernel_driver},
                       {"sm_clock_mhz", s.sm_clock_mhz},
                       {"mem_clock_mhz", s.mem_clock_mhz},
                       {"sm_clock_max_mhz", s.sm_clock_max_mhz},
                       {"mem_clock_max_mhz", s.mem_clock_max_mhz},
                       {"workload", s.workload},
                       {"unit", s.unit},
                       {"dtype", s.dtype},
                       {"batch", s.batch},
                       {"quick", s.quick},
                       {"tiny", s.tiny},
                       {"conv_api", s.conv_api},
                       {"status", s.status},
                       {"message", s.message},
                       {"throughput", s.throughput},
                       {"ratio", r > 0 ? json(r) : json(nullptr)},
                       {"ms_per_iter", s.ms_per_iter},
                       {"first_call_ms", s.first_call_ms},
                       {"tflops", s.tflops},
                       {"workspace_bytes", s.workspace_bytes},
                       {"peak_memory_bytes", s.peak_memory_bytes},
                       {"wall_ms", s.wall_ms},
                       {"items", items}});
  }
  json doc = {{"schema", 1},
              {"note", run.note},
              {"baseline", baseline},
              {"gpus", gpus},
              {"samples", samples}};
  return doc.dump(2) + "\n";
}

Result<Run> parse_json(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("samples") ||
      !doc["samples"].is_array()) {
    return fail(ErrorCode::usage, "not a cudnnctl bench document (no \"samples\" list)");
  }
  Run run;
  run.note = doc.value("note", std::string(k_scope_note));
  try {
    for (const auto& j : doc["samples"]) {
      Sample s;
      s.version = j.at("version").get<std::string>();
      s.workload = j.at("workload").get<std::string>();
      s.gpu = j.at("gpu").get<int>();
      s.shim = j.value("shim", "");
      s.cudnn_version = j.value("cudnn_version", 0L);
      s.gpu_name = j.value("gpu_name", "");
      s.compute_capability = j.value("compute_capability", "");
      s.uuid = j.value("uuid", "");
      s.gpu_memory_bytes = j.value("gpu_memory_bytes", 0ULL);
      s.driver_version = j.value("driver_version", 0);
      s.kernel_driver = j.value("kernel_driver", "");
      s.sm_clock_mhz = j.value("sm_clock_mhz", 0);
      s.mem_clock_mhz = j.value("mem_clock_mhz", 0);
      s.sm_clock_max_mhz = j.value("sm_clock_max_mhz", 0);
      s.mem_clock_max_mhz = j.value("mem_clock_max_mhz", 0);
      s.unit = j.value("unit", "");
      s.dtype = j.value("dtype", "");
      s.batch = j.value("batch", 0);
      s.quick = j.value("quick", false);
      s.tiny = j.value("tiny", false);
      s.conv_api = j.value("conv_api", "");
      s.status = j.value("status", "failed");
      s.message = j.value("message", "");
      s.throughput = j.value("throughput", 0.0);
      s.ms_per_iter = j.value("ms_per_iter", 0.0);
      s.first_call_ms = j.value("first_call_ms", 0.0);
      s.tflops = j.value("tflops", 0.0);
      s.workspace_bytes = j.value("workspace_bytes", 0ULL);
      s.peak_memory_bytes = j.value("peak_memory_bytes", 0ULL);
      s.wall_ms = j.value("wall_ms", 0.0);
      for (const auto& i : j.value("items", json::array())) {
        s.items.push_back(Item{.item = i.value("item", ""),
                               .pass = i.value("pass", ""),
                               .shape = i.value("shape", ""),
                               .status = i.value("status", ""),
                               .detail = i.value("detail", ""),
                               .message = i.value("message", ""),
                               .count = i.value("count", 1),
                               .iterations = i.value("iterations", 0),
                               .ms = i.value("ms", 0.0),
                               .first_call_ms = i.value("first_call_ms", 0.0),
                               .flops = i.value("flops", 0.0),
                               .workspace_bytes = i.value("workspace_bytes", 0ULL)});
      }
      run.samples.push_back(std::move(s));
    }
  } catch (const json::exception& e) {
    return fail(ErrorCode::usage, std::string("malformed bench sample: ") + e.what());
  }
  return run;
}

} // namespace cudnnctl::bench
