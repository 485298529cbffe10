// SPDX-License-Identifier: Apache-2.0
// The side-by-side table and the CSV of a bench Run.
#include "bench/render.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cstdio>

namespace cudnnctl::bench {

namespace {

std::string mib(unsigned long long bytes) {
  return util::fixed(static_cast<double>(bytes) / 1048576.0, 1);
}

const Sample* find(const Run& run, const std::string& version, int gpu,
                   const std::string& workload) {
  for (const auto& s : run.samples) {
    if (s.version == version && s.gpu == gpu && s.workload == workload) {
      return &s;
    }
  }
  return nullptr;
}

std::string ratio_text(const Sample& s, const Sample* base) {
  if (!base || base->throughput <= 0 || s.throughput <= 0) {
    return "-";
  }
  if (base == &s) {
    return "1.00 (baseline)";
  }
  double r = s.throughput / base->throughput;
  return util::fixed(r, 2) + " (" + util::fixed(100 * (r - 1), 1, util::ShowSign::yes) + " %)";
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) {
    s.append(width - s.size(), ' ');
  }
  return s;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) {
    return s;
  }
  std::string out = "\"";
  for (char c : s) {
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return out + "\"";
}

} // namespace

std::string render_table(const Run& run, const std::string& wanted) {
  std::string baseline = baseline_of(run, wanted);
  std::string out;
  std::vector<int> gpus;
  std::vector<std::string> workloads;
  for (const auto& s : run.samples) {
    if (std::find(gpus.begin(), gpus.end(), s.gpu) == gpus.end()) {
      gpus.push_back(s.gpu);
      out += "GPU " + std::to_string(s.gpu) + ": " + (s.gpu_name.empty() ? "?" : s.gpu_name) +
             (s.compute_capability.empty() ? "" : ", sm " + s.compute_capability) + ", " +
             mib(s.gpu_memory_bytes) + " MiB; driver " +
             (s.kernel_driver.empty() ? "?" : s.kernel_driver) + " (CUDA API " +
             std::to_string(s.driver_version / 1000) + "." +
             std::to_string(s.driver_version % 1000 / 10) + "); clocks max " +
             std::to_string(s.sm_clock_max_mhz) + " MHz SM / " +
             std::to_string(s.mem_clock_max_mhz) + " MHz memory, after the run " +
             std::to_string(s.sm_clock_mhz) + " / " + std::to_string(s.mem_clock_mhz) + " MHz\n";
    }
    if (std::find(workloads.begin(), workloads.end(), s.workload) == workloads.end()) {
      workloads.push_back(s.workload);
    }
  }
  out += "Note: " + run.note + ".\n";
  out += "Ratios: throughput against " + baseline + " (higher is faster).\n\n";
  const size_t w_version = 16;
  for (const auto& workload : workloads) {
    for (int gpu : gpus) {
      const Sample* base = find(run, baseline, gpu, workload);
      std::string unit;
      std::string desc;
      for (const auto& v : versions_of(run)) {
        if (const Sample* s = find(run, v, gpu, workload); s && !s->unit.empty()) {
          unit = s->unit;
          desc = s->dtype + ", batch " + std::to_string(s->batch) + (s->quick ? ", quick" : "") +
                 (s->tiny ? ", tiny shapes" : "") +
                 (s->conv_api == "legacy" ? ", legacy convolution API" : "");
          break;
        }
      }
      out += workload + " on GPU " + std::to_string(gpu) + " (" + desc + ")\n";
      out += "  " + pad("version", w_version) + pad(unit.empty() ? "throughput" : unit, 14) +
             pad("vs baseline", 18) + pad("ms/iter", 10) + pad("first call ms", 15) +
             pad("workspace MiB", 15) + pad("peak mem MiB", 14) + "status\n";
      for (const auto& v : versions_of(run)) {
        const Sample* s = find(run, v, gpu, workload);
        if (!s) {
          continue;
        }
        bool measured = s->status == "ok" || s->status == "incomplete";
        out += "  " + pad(s->version, w_version) +
               pad(measured ? util::fixed(s->throughput, 1) : "-", 14) +
               pad(ratio_text(*s, base), 18) +
               pad(measured ? util::fixed(s->ms_per_iter, 3) : "-", 10) +
               pad(measured ? util::fixed(s->first_call_ms, 1) : "-", 15) +
               pad(mib(s->workspace_bytes), 15) + pad(mib(s->peak_memory_bytes), 14) + s->status +
               (s->message.empty() ? "" : ": " + s->message) + "\n";
      }
      out += "\n";
    }
  }
  return out;
}

std::string render_csv(const Run& run, const std::string& wanted) {
  std::string baseline = baseline_of(run, wanted);
  std::string out = "workload,gpu,gpu_name,compute_capability,version,cudnn_version,dtype,batch,"
                    "quick,unit,throughput,ratio,ms_per_iter,first_call_ms,tflops,workspace_bytes,"
                    "peak_memory_bytes,kernel_driver,sm_clock_mhz,mem_clock_mhz,status,message\n";
  for (const auto& s : run.samples) {
    const Sample* base = find(run, baseline, s.gpu, s.workload);
    std::string ratio = base && base->throughput > 0 && s.throughput > 0
                            ? util::fixed(s.throughput / base->throughput, 4)
                            : "";
    out += csv_field(s.workload) + "," + std::to_string(s.gpu) + "," + csv_field(s.gpu_name) + "," +
           s.compute_capability + "," + csv_field(s.version) + "," +
           std::to_string(s.cudnn_version) + "," + s.dtype + "," + std::to_string(s.batch) + "," +
           (s.quick ? "true" : "false") + "," + csv_field(s.unit) + "," +
           util::fixed(s.throughput, 4) + "," + ratio + "," + util::fixed(s.ms_per_iter, 4) + "," +
           util::fixed(s.first_call_ms, 3) + "," + util::fixed(s.tflops, 3) + "," +
           std::to_string(s.workspace_bytes) + "," + std::to_string(s.peak_memory_bytes) + "," +
           csv_field(s.kernel_driver) + "," + std::to_string(s.sm_clock_mhz) + "," +
           std::to_string(s.mem_clock_mhz) + "," + s.status + "," + csv_field(s.message) + "\n";
  }
  return out;
}

} // namespace cudnnctl::bench
