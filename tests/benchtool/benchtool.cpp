// SPDX-License-Identifier: Apache-2.0
// Developer driver of the bench and smoke libraries, for scripts/gpu/gpu_truth.sh and the e2e
// suite `bench` (the `cudnnctl bench` command is a later pass: this calls the same library
// functions it will).
//   cudnnctl_benchtool bench --version LABEL=/abs/libcudnn.so.N... [--baseline LABEL]
//        [--workloads a,b] [--gpus 0,1] [--quick] [--batch N] [--dtype fp16|bf16]
//        [--iterations N] [--warmup N] [--tiny] [--timeout S]
//        [--json FILE] [--csv FILE] [--plot FILE.svg]
//     runs bench::run, prints progress lines on stderr and the table on stdout
//   cudnnctl_benchtool render FILE.json [--baseline LABEL] [--csv F] [--plot F]
//     renders a recorded run again (no GPU)
//   cudnnctl_benchtool smoke /abs/libcudnn.so.N [--expect NNNNN] [--timeout S]
//     smoke::run_smoke (the parent side installs use) and prints its JSON
//   cudnnctl_benchtool gpus
//     smoke::run_gpu_presence and gpu::check_support for --check RELEASE:CUDA...
// Exit: 0, or the ErrorCode's exit code (1 environment, 2 usage, 7 requirement, 8 smoke failed).
#include "bench/bench.hpp"
#include "bench/render.hpp"
#include "gpu/inventory.hpp"
#include "smoke/runner.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

using namespace cudnnctl;

namespace {

int usage(const std::string& why) {
  std::cerr << "cudnnctl_benchtool: " << why << " (see the comment at the top of benchtool.cpp)\n";
  return 2;
}

int report(const Error& e) {
  std::cerr << "cudnnctl_benchtool: error: " << e.full_message() << "\n";
  return exit_code(e.code);
}

bool write(const std::string& path, const std::string& text) {
  if (path.empty()) {
    return true;
  }
  auto r = util::write_file_atomic(path, text);
  if (!r) {
    std::cerr << "cudnnctl_benchtool: cannot write " << path << ": " << r.error().message << "\n";
  }
  return static_cast<bool>(r);
}

std::vector<int> ints(const std::string& list) {
  std::vector<int> out;
  for (const auto& p : util::split(list, ',')) {
    out.push_back(std::atoi(std::string(p).c_str()));
  }
  return out;
}

int render(const bench::Run& run, const std::string& baseline, const std::string& json,
           const std::string& csv, const std::string& plot) {
  std::cout << bench::render_table(run, baseline);
  bool ok = write(json, bench::render_json(run, baseline)) &&
            write(csv, bench::render_csv(run, baseline)) &&
            write(plot, bench::render_svg(run, baseline));
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    return usage("name a command: bench, render, smoke, gpus");
  }
  std::string cmd = argv[1];
  std::vector<std::string> pos;
  std::string baseline, json, csv, plot;
  std::vector<std::string> checks;
  bench::Request req;
  long expect = -1;
  int timeout = 120;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> std::string { return i + 1 < argc ? argv[++i] : std::string(); };
    if (a == "--version") {
      std::string v = val();
      auto eq = v.find('=');
      if (eq == std::string::npos) {
        return usage("--version LABEL=/abs/libcudnn.so.N");
      }
      req.versions.push_back({v.substr(0, eq), v.substr(eq + 1)});
    } else if (a == "--baseline") {
      baseline = val();
    } else if (a == "--workloads") {
      req.workloads.clear();
      for (const auto& w : util::split(val(), ',')) {
        req.workloads.emplace_back(w);
      }
    } else if (a == "--gpus") {
      req.gpus = ints(val());
    } else if (a == "--quick") {
      req.quick = true;
    } else if (a == "--tiny") {
      req.tiny = true;
    } else if (a == "--batch") {
      req.batch = std::atoi(val().c_str());
    } else if (a == "--dtype") {
      req.dtype = val();
    } else if (a == "--iterations") {
      req.iterations = std::atoi(val().c_str());
    } else if (a == "--warmup") {
      req.warmup = std::atoi(val().c_str());
    } else if (a == "--timeout") {
      timeout = std::atoi(val().c_str());
      req.timeout = std::chrono::seconds(timeout);
    } else if (a == "--expect") {
      expect = std::atol(val().c_str());
    } else if (a == "--check") {
      checks.push_back(val());
    } else if (a == "--json") {
      json = val();
    } else if (a == "--csv") {
      csv = val();
    } else if (a == "--plot") {
      plot = val();
    } else {
      pos.push_back(a);
    }
  }
  if (cmd == "bench") {
    auto run = bench::run(req, [](const std::string& line) { std::cerr << line << "\n"; });
    if (!run) {
      return report(run.error());
    }
    return render(*run, baseline.empty() ? req.versions.front().label : baseline, json, csv, plot);
  }
  if (cmd == "render" && pos.size() == 1) {
    auto text = util::read_file(pos[0]);
    if (!text) {
      return report(text.error());
    }
    auto run = bench::parse_json(*text);
    if (!run) {
      return report(run.error());
    }
    return render(*run, baseline, json, csv, plot);
  }
  if (cmd == "smoke" && pos.size() == 1) {
    std::optional<long> want;
    if (expect >= 0) {
      want = expect;
    }
    auto r = smoke::run_smoke(pos[0], want, std::chrono::seconds(timeout));
    if (!r) {
      return report(r.error());
    }
    std::cout << smoke::to_json(*r).dump(2) << "\n";
    return r->outcome == smoke::Outcome::failed ? 8 : 0;
  }
  if (cmd == "gpus") {
    auto inv = gpu::inventory(std::chrono::seconds(timeout));
    if (!inv) {
      return report(inv.error());
    }
    nlohmann::json out = {{"inventory", smoke::to_json(inv->report)}};
    for (const auto& c : checks) {
      auto colon = c.find(':');
      std::string release = c.substr(0, colon);
      int cuda = colon == std::string::npos ? 0 : std::atoi(c.substr(colon + 1).c_str());
      std::optional<std::string_view> drv;
      if (inv->kernel_driver) {
        drv = *inv->kernel_driver;
      }
      auto rep = gpu::check_support(gpu::builtin_support(), release, cuda, inv->gpus, drv);
      nlohmann::json v = nlohmann::json::array();
      for (const auto& g : rep.gpus) {
        v.push_back({{"gpu", g.gpu.index},
                     {"verdict", gpu::verdict_name(g.verdict)},
                     {"message", g.message}});
      }
      out["checks"][c] = {{"ok", rep.ok()}, {"gpus", v}};
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  return usage("unknown command or arguments");
}
