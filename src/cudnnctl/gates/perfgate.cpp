// SPDX-License-Identifier: Apache-2.0
#include "gates/perfgate.hpp"

#include "bench/render.hpp"
#include "manifest/version.hpp"
#include "store/view.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace cudnnctl::gates {

Result<bench::Target> bench_target(const store::Layout& layout, const store::EntryInfo& entry) {
  TRY_ASSIGN(manifest::Version v, entry.parsed_version);
  fs::path shim =
      layout.entry_dir(entry.name) / "lib" / ("libcudnn.so." + std::to_string(v.major()));
  return bench::Target{entry.version, fs::absolute(shim)};
}

Status judge_perf(const bench::Run& run, PerfGate& gate) {
  auto g = bench::compare(run, gate.baseline, gate.candidate, gate.pct);
  gate.compared = g.compared;
  gate.slower = g.slower;
  if (g.passed) {
    gate.status = "passed";
    gate.message = gate.candidate + " is within " + util::fixed(gate.pct, 1) + " % of " +
                   gate.baseline + " on every workload: " + util::join(g.compared, "; ");
    return {};
  }
  gate.status = "failed";
  gate.message = "performance gate failed: " + gate.candidate + " is more than " +
                 util::fixed(gate.pct, 1) + " % slower than " + gate.baseline + ": " +
                 util::join(g.slower, "; ");
  return fail(ErrorCode::rolled_back, gate.message);
}

Status perf_gate(Env& env, const store::EntryInfo& entry, const Demands& d, Findings& out) {
  PerfGate gate;
  gate.pct = *d.perf_gate;
  gate.candidate_entry = entry.name;
  gate.candidate = entry.version;
  auto skipped = [&](const std::string& why) -> Status {
    gate.status = "skipped";
    gate.message = why;
    out.check("perf-gate", "skipped", why);
    out.perf_gate = gate;
    if (d.require_gpu) {
      return fail(ErrorCode::rolled_back,
                  "performance gate could not run (" + why + ") and --require-gpu is set");
    }
    env.notes.warn("performance gate skipped: " + why);
    return {};
  };
  std::vector<std::string> warnings;
  TRY_ASSIGN(store::StoreView view, store::read_store(env.layout, warnings));
  std::optional<int> prev =
      view.current ? store::rollback_target(view.generations, *view.current) : std::nullopt;
  auto prev_name = view.entry_of(prev);
  const store::EntryInfo* base = prev_name ? view.entry(*prev_name) : nullptr;
  if (!base) {
    return skipped("no previous generation to compare with");
  }
  if (base->name == entry.name) {
    return skipped("the previous generation is the same entry");
  }
  gate.baseline_entry = base->name;
  gate.baseline = base->version;
  if (gate.baseline == gate.candidate) { // same version, other CUDA variant or components
    gate.baseline = base->name;
    gate.candidate = entry.name;
  }
  TRY_ASSIGN(bench::Target b, bench_target(env.layout, *base));
  TRY_ASSIGN(bench::Target c, bench_target(env.layout, entry));
  b.label = gate.baseline;
  c.label = gate.candidate;
  bench::Request req;
  req.versions = {b, c};
  req.quick = true;
  req.timeout = std::chrono::seconds(std::max(60, env.config.smoke_timeout * 5));
  if (const char* t = std::getenv("CUDNNCTL_TEST_BENCH_TINY"); t && std::strcmp(t, "1") == 0) {
    req.tiny = true;
    req.iterations = 2;
    req.warmup = 0;
  }
  env.notes.info("performance gate: the bench's quick set on " + gate.candidate + " and " +
                 gate.baseline + " (" + std::string(bench::k_scope_note) + ")");
  auto run = bench::run(req, [&](const std::string& line) { env.notes.info(line); });
  if (!run) {
    if (run.error().code == ErrorCode::requirement) {
      return skipped(run.error().message);
    }
    Error e = run.error();
    e.code = ErrorCode::rolled_back;
    e.message = "performance gate could not run: " + e.message;
    gate.status = "failed";
    gate.message = e.message;
    out.check("perf-gate", "failed", e.message);
    out.perf_gate = gate;
    return fail(e);
  }
  gate.run_json = bench::render_json(*run, gate.baseline);
  Status st = judge_perf(*run, gate);
  out.check("perf-gate", gate.status, gate.message);
  out.perf_gate = gate;
  if (st) {
    env.notes.action("performance gate passed: " + gate.message);
  }
  return st;
}

} // namespace cudnnctl::gates
