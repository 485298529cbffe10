// SPDX-License-Identifier: Apache-2.0
#include "ops/bench.hpp"

#include "bench/render.hpp"
#include "gates/perfgate.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace cudnnctl::ops {

namespace {

// The entries to measure, in the order asked (or the store's), each once.
Result<std::vector<const store::EntryInfo*>> chosen(Context& ctx, const store::StoreView& view,
                                                    const std::vector<std::string>& versions) {
  std::vector<const store::EntryInfo*> out;
  auto add = [&](const store::EntryInfo* e) {
    if (std::find(out.begin(), out.end(), e) == out.end()) {
      out.push_back(e);
    }
  };
  if (versions.empty()) {
    for (const auto& e : view.entries) {
      add(&e);
    }
    if (out.empty()) {
      return fail(ErrorCode::usage, "nothing is installed to bench; run `cudnnctl install "
                                    "VERSION` first, or render a recorded run with --from FILE");
    }
    return out;
  }
  for (const auto& v : versions) {
    auto m = match_entries(ctx, view, manifest::VersionArg::of(v));
    if (m.empty()) {
      std::vector<std::string> have;
      for (const auto& e : view.entries) {
        have.push_back(e.version);
      }
      return fail(ErrorCode::usage,
                  "--versions: cuDNN " + v + " is not installed" +
                      (have.empty() ? std::string(" (nothing is installed)")
                                    : " (installed: " + util::join(have, ", ") + ")") +
                      "; run `cudnnctl install " + v + "` first");
    }
    for (const auto* e : m) {
      add(e);
    }
  }
  return out;
}

} // namespace

Status bench(Context& ctx, const BenchArgs& a, BenchResult& out) {
  if (a.from) {
    if (!a.versions.empty()) {
      return fail(ErrorCode::usage, "--from renders a recorded run; it takes no --versions");
    }
    auto text = util::read_file(*a.from);
    if (!text) {
      return fail(ErrorCode::usage, "--from: " + text.error().message +
                                        " (give a file written by `cudnnctl --json bench`)");
    }
    auto run = bench::parse_json(*text);
    if (!run) { // the whole `--json` object of a bench command: its "data"
      auto doc = nlohmann::json::parse(*text, nullptr, false);
      if (doc.is_object() && doc.contains("data") && doc["data"].is_object()) {
        run = bench::parse_json(doc["data"].dump());
      }
    }
    if (!run) {
      return fail(ErrorCode::usage, "--from " + *a.from + ": " + run.error().message);
    }
    out.run = std::move(*run);
    out.baseline = bench::baseline_of(*out.run, a.baseline.value_or(""));
    return {};
  }
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(auto entries, chosen(ctx, view, a.versions));
  bench::Request req;
  std::vector<std::string> labels;
  for (const auto* e : entries) {
    TRY_ASSIGN(bench::Target t, gates::bench_target(ctx.layout(), *e));
    // Two builds of one version (CUDA variants, components): told apart by entry name.
    if (std::any_of(entries.begin(), entries.end(), [&](const store::EntryInfo* o) {
          return o != e && o->version == e->version;
        })) {
      t.label = e->name;
    }
    labels.push_back(t.label);
    req.versions.push_back(std::move(t));
  }
  req.gpus = a.gpus;
  if (!a.workloads.empty()) {
    req.workloads = a.workloads;
  }
  req.quick = a.quick;
  req.batch = a.batch;
  req.dtype = a.dtype;
  req.conv_api = a.conv_api;
  req.iterations = a.iterations;
  req.tiny = a.tiny;
  if (a.tiny) {
    req.warmup = 0;
  }
  std::string baseline = a.baseline.value_or("");
  if (baseline.empty()) {
    if (const auto* act = view.active_entry()) {
      for (size_t i = 0; i < entries.size(); ++i) {
        baseline = entries[i]->name == act->name ? labels[i] : baseline;
      }
    }
  } else if (std::find(labels.begin(), labels.end(), baseline) == labels.end()) {
    auto m = match_entries(ctx, view, manifest::VersionArg::of(baseline));
    auto it = m.empty() ? entries.end() : std::find(entries.begin(), entries.end(), m.front());
    if (it == entries.end()) {
      return fail(ErrorCode::usage, "--baseline " + baseline + " is not one of the versions " +
                                        "measured (" + util::join(labels, ", ") + ")");
    }
    baseline = labels[static_cast<size_t>(it - entries.begin())];
  }
  ctx.info("bench: " + std::string(bench::k_scope_note));
  TRY_ASSIGN(bench::Run run, bench::run(req, [&](const std::string& line) { ctx.info(line); }));
  out.run = std::move(run);
  out.baseline = bench::baseline_of(*out.run, baseline);
  return {};
}

} // namespace cudnnctl::ops
