// SPDX-License-Identifier: Apache-2.0
#include "bench/bench.hpp"
#include "smoke/runner.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

namespace cudnnctl::bench {

namespace {

// The GPUs to measure: the request's, or every usable one the smoke helper sees.
Result<std::vector<int>> gpus_for(const Request& req) {
  if (!req.gpus.empty()) {
    return req.gpus;
  }
  auto inv = smoke::run_gpu_presence(std::chrono::seconds(120));
  if (!inv) {
    return std::unexpected(inv.error());
  }
  std::vector<int> gpus;
  for (const auto& g : inv->gpus) {
    if (g.status == "usable") {
      gpus.push_back(g.gpu);
    }
  }
  if (gpus.empty()) {
    return fail(ErrorCode::requirement, "bench needs a usable GPU: " + inv->message);
  }
  return gpus;
}

std::vector<std::string> child_args(const std::string& helper, const Request& req, const Target& t,
                                    int gpu, const std::string& workload) {
  std::vector<std::string> a = {helper,
                                "--cudnn",
                                t.shim.string(),
                                "--workload",
                                workload,
                                "--gpu",
                                std::to_string(gpu),
                                "--dtype",
                                req.dtype,
                                "--iterations",
                                std::to_string(req.iterations),
                                "--warmup",
                                std::to_string(req.warmup)};
  if (req.batch) {
    a.push_back("--batch");
    a.push_back(std::to_string(*req.batch));
  }
  if (req.quick) {
    a.push_back("--quick");
  }
  if (req.tiny) {
    a.push_back("--tiny");
  }
  if (req.conv_api != "graph") {
    a.push_back("--conv-api");
    a.push_back(req.conv_api);
  }
  return a;
}

} // namespace

Result<std::string> find_helper() {
  return smoke::find_child(k_helper_name, "CUDNNCTL_BENCH_HELPER");
}

Result<Run> run(const Request& req, const Progress& progress) {
  if (req.versions.empty()) {
    return fail(ErrorCode::usage, "bench: no cuDNN version to measure");
  }
  for (const auto& t : req.versions) {
    if (!t.shim.is_absolute()) {
      return fail(ErrorCode::usage, "bench: " + t.shim.string() + " is not an absolute path");
    }
  }
  TRY_ASSIGN(std::string helper, find_helper());
  TRY_ASSIGN(std::vector<int> gpus, gpus_for(req));
  Run out;
  size_t round = 0;
  for (int gpu : gpus) {
    for (const auto& workload : req.workloads) {
      // Alternate the order of the versions from one workload to the next, so that a drift
      // of the GPU (clocks, temperature) does not always favour the same one.
      std::vector<const Target*> order;
      for (const auto& t : req.versions) {
        order.push_back(&t);
      }
      if (round++ % 2 == 1) {
        std::reverse(order.begin(), order.end());
      }
      for (const Target* t : order) {
        util::ProcessOptions o;
        o.argv = child_args(helper, req, *t, gpu, workload);
        o.env = smoke::helper_env();
        o.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(req.timeout);
        auto t0 = std::chrono::steady_clock::now();
        TRY_ASSIGN(util::ProcessResult p, util::run_process(o));
        Sample s = parse_child(p, *t, gpu, workload, req.timeout);
        s.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count();
        if (progress) {
          std::string line =
              "bench: " + workload + " on GPU " + std::to_string(gpu) + " with " + t->label + ": ";
          line += s.status == "ok" || s.status == "incomplete"
                      ? util::fixed(s.throughput, 1) + " " + s.unit +
                            (s.status == "incomplete" ? " (" + s.message + ")" : "")
                      : s.status + ": " + s.message;
          progress(line);
        }
        out.samples.push_back(std::move(s));
      }
    }
  }
  return out;
}

GateResult compare(const Run& run, const std::string& baseline, const std::string& candidate,
                   double pct) {
  GateResult g;
  std::map<std::pair<int, std::string>, const Sample*> base;
  for (const auto& s : run.samples) {
    if (s.version == baseline) {
      base[{s.gpu, s.workload}] = &s;
    }
  }
  for (const auto& s : run.samples) {
    if (s.version != candidate) {
      continue;
    }
    auto it = base.find({s.gpu, s.workload});
    std::string where = s.workload + " on GPU " + std::to_string(s.gpu);
    if (it == base.end() || it->second->throughput <= 0 || s.throughput <= 0) {
      g.passed = false;
      g.slower.push_back(where + ": not measured on both (" + s.status + ": " + s.message + ")");
      continue;
    }
    double change = 100.0 * (s.throughput / it->second->throughput - 1.0);
    std::string line = where + ": " + util::fixed(s.throughput, 1) + " vs " +
                       util::fixed(it->second->throughput, 1) + " " + s.unit + " (" +
                       util::fixed(change, 1, util::ShowSign::yes) + " %)";
    g.compared.push_back(line);
    if (change < -std::fabs(pct)) {
      g.passed = false;
      g.slower.push_back(line);
    }
  }
  if (g.compared.empty() && g.slower.empty()) {
    g.passed = false;
    g.slower.push_back("no workload of " + candidate + " was measured");
  }
  return g;
}

} // namespace cudnnctl::bench
