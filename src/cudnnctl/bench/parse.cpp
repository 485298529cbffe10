// SPDX-License-Identifier: Apache-2.0
// cudnnctl-bench's JSON lines (documented in smoke/bench_main.cpp) into a Sample.
#include "bench/bench.hpp"
#include "smoke/json_lines.hpp"

#include <nlohmann/json.hpp>

namespace cudnnctl::bench {

namespace {

using nlohmann::json;

std::string s_of(const json& j, const char* k) {
  return smoke::str_of(j, k);
}
double d_of(const json& j, const char* k) {
  return smoke::number_of(j, k).value_or(0.0);
}
long long i_of(const json& j, const char* k) {
  return smoke::long_of(j, k).value_or(0);
}

} // namespace

Sample parse_child(const util::ProcessResult& p, const Target& target, int gpu,
                   const std::string& workload, std::chrono::seconds timeout) {
  Sample s;
  s.version = target.label;
  s.shim = target.shim.string();
  s.gpu = gpu;
  s.workload = workload;
  bool result = false;
  std::string error;
  std::string error_status;
  size_t items_seen = 0;
  for (const auto& j : smoke::json_lines(p.out)) {
    std::string ev = s_of(j, "event");
    if (ev == "device") {
      s.gpu_name = s_of(j, "name");
      s.compute_capability = s_of(j, "compute_capability");
      s.uuid = s_of(j, "uuid");
      s.gpu_memory_bytes = static_cast<unsigned long long>(i_of(j, "memory_bytes"));
      s.cudnn_version = static_cast<long>(i_of(j, "cudnn_version"));
      s.driver_version = static_cast<int>(i_of(j, "driver_version"));
      s.kernel_driver = s_of(j, "kernel_driver");
      s.sm_clock_max_mhz = static_cast<int>(i_of(j, "sm_clock_max_mhz"));
      s.mem_clock_max_mhz = static_cast<int>(i_of(j, "mem_clock_max_mhz"));
    } else if (ev == "item") {
      s.items.push_back(
          Item{.item = s_of(j, "item"),
               .pass = s_of(j, "pass"),
               .shape = s_of(j, "shape"),
               .status = s_of(j, "status"),
               .detail = s_of(j, "detail"),
               .message = s_of(j, "message"),
               .count = static_cast<int>(i_of(j, "count")),
               .iterations = static_cast<int>(i_of(j, "iterations")),
               .ms = d_of(j, "ms"),
               .first_call_ms = d_of(j, "first_call_ms"),
               .flops = d_of(j, "flops"),
               .workspace_bytes = static_cast<unsigned long long>(i_of(j, "workspace_bytes"))});
      ++items_seen;
    } else if (ev == "result") {
      result = true;
      s.unit = s_of(j, "unit");
      s.dtype = s_of(j, "dtype");
      s.batch = static_cast<int>(i_of(j, "batch"));
      s.quick = j.value("quick", false);
      s.tiny = j.value("tiny", false);
      s.conv_api = s_of(j, "conv_api");
      s.status = s_of(j, "status");
      s.message = s_of(j, "message");
      s.throughput = d_of(j, "throughput");
      s.ms_per_iter = d_of(j, "ms_per_iter");
      s.first_call_ms = d_of(j, "first_call_ms");
      s.tflops = d_of(j, "tflops");
      s.workspace_bytes = static_cast<unsigned long long>(i_of(j, "workspace_bytes"));
      s.peak_memory_bytes = static_cast<unsigned long long>(i_of(j, "peak_memory_bytes"));
      s.sm_clock_mhz = static_cast<int>(i_of(j, "sm_clock_mhz"));
      s.mem_clock_mhz = static_cast<int>(i_of(j, "mem_clock_mhz"));
    } else if (ev == "error") {
      error = s_of(j, "message");
      error_status = s_of(j, "status");
    }
  }
  if (p.timed_out || p.term_signal != 0) {
    s.status = "failed";
    s.message = "cudnnctl-bench " +
                (p.timed_out ? "timed out after " + std::to_string(timeout.count()) + " s"
                             : "was " + p.describe()) +
                " after " + std::to_string(items_seen) + " measurement(s)";
    return s;
  }
  if (!result) {
    s.status = error_status.empty() ? "failed" : error_status;
    s.message = !error.empty()  ? error
                : p.err.empty() ? "cudnnctl-bench gave no result (" + p.describe() + ")"
                                : smoke::last_line(p.err);
  }
  return s;
}

} // namespace cudnnctl::bench
