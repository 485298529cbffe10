// SPDX-License-Identifier: Apache-2.0
#include "ops/doctor.hpp"

#include "doctor/compat.hpp"
#include "doctor/doctor.hpp"
#include "gpu/inventory.hpp"
#include "host/host.hpp"
#include "host/inuse.hpp"
#include "integrate/modulefiles.hpp"
#include "integrate/slots.hpp"
#include "ops/framework_gate.hpp"
#include "ops/query.hpp"
#include "ops/recalls.hpp"
#include "store/slots.hpp"

#include <algorithm>
#include <cstdlib>

namespace cudnnctl::ops {

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The node's GPUs (cudnnctl-smoke --gpus) into the report, and a finding when the active
// cudnnctl generation's build has no device code for one of them.
void add_gpus(Context& ctx, doctor::DoctorReport& report) {
  auto inv = gpu::inventory(std::chrono::seconds(std::max(1, ctx.config().smoke_timeout)));
  if (!inv) {
    report.host.gpus_note = "not checked: " + inv.error().message;
    return;
  }
  for (const auto& g : inv->report.gpus) {
    report.host.gpus.push_back(
        {g.gpu, g.name, g.compute_capability, g.memory_bytes, g.mig, g.uuid, g.status});
  }
  if (inv->gpus.empty()) {
    report.host.gpus_note = inv->report.message;
    return;
  }
  for (const auto& i : report.installs) {
    if (!i.active || !i.version || !i.cuda_major) {
      continue;
    }
    auto verdicts = gpu::check_support(gpu::builtin_support(), *i.version, *i.cuda_major, inv->gpus,
                                       inv->kernel_driver);
    if (verdicts.ok()) {
      continue;
    }
    auto alt = gpu::release_for(gpu::builtin_support(), *i.cuda_major, inv->gpus);
    std::string cuda = std::to_string(*i.cuda_major);
    doctor::Finding f;
    f.code = "gpu-arch-unsupported";
    f.severity = doctor::Severity::error;
    f.message = "the active cudnnctl generation (" + i.store_entry +
                ") cannot run on every GPU here: " + verdicts.refusal();
    f.paths = {i.dir};
    f.fix = alt ? "cudnnctl install " + *alt + " --cuda " + cuda +
                      " (the newest release with device code for every GPU here), or `cudnnctl "
                      "rollback` to an earlier generation"
                : "`cudnnctl rollback` to an earlier generation, or install a build listed in "
                  "manifests/gpu_support.json for these GPUs";
    report.findings.push_back(std::move(f));
  }
}

// Every active slot and which one the loader drop-in serves per SONAME, with why
// (integrate::pick_per_major, the rule the drop-in is written by), and for the others how a
// process reaches them. An info finding per slot the loader does not serve.
void add_slots(Context& ctx, const std::optional<doctor::ToolkitFacts>& cuda,
               doctor::DoctorReport& report) {
  std::vector<std::string> warnings; // doctor's store findings report a damaged store
  auto view = store::read_store(ctx.layout(), warnings);
  if (!view) {
    return;
  }
  std::vector<SlotInfo> slots = slot_infos(ctx, *view);
  std::vector<integrate::SlotCandidate> all;
  for (const auto& s : slots) {
    all.push_back({s.info.entry, store::slot_major(s.slot), s.info.cuda, s.primary});
  }
  // As integrate::loader_entries: the toolkit counts only when there is a choice.
  std::optional<int> toolkit;
  if (cuda && all.size() > 1) {
    toolkit = cuda->major;
  }
  auto picks = integrate::pick_per_major(all, toolkit);
  for (size_t i = 0; i < slots.size(); ++i) {
    const auto& s = slots[i];
    doctor::SlotView v;
    v.slot = s.slot;
    v.primary = s.primary;
    v.version = s.info.version;
    v.generation = s.info.generation;
    v.entry = s.info.entry;
    v.soname = "libcudnn.so." + std::to_string(all[i].major);
    auto pick = std::find_if(picks.begin(), picks.end(), [&](const integrate::SlotCandidate& p) {
      return p.major == all[i].major;
    });
    v.served = pick != picks.end() && pick->entry == s.info.entry;
    if (v.served) {
      v.why = integrate::pick_reason(*pick, all, toolkit);
    } else if (pick != picks.end()) {
      std::string other = "?";
      for (const auto& o : slots) {
        if (o.info.entry == pick->entry) {
          other = o.slot;
        }
      }
      v.why = "a plain process gets it from slot " + other + " (" +
              integrate::pick_reason(*pick, all, toolkit) + "), not from this slot";
      v.reach.push_back("cudnnctl env --slot " + s.slot +
                        " (CUDNN_PATH and the other build variables name its store entry; "
                        "--ld-library-path adds LD_LIBRARY_PATH for programs that load it)");
      const auto* e = view->entry(s.info.entry);
      if (ctx.config().module_files && e) {
        v.reach.push_back("module load cudnn/" + integrate::module_version(*e) +
                          " (after `module use " +
                          (ctx.layout().sys_prefix() / "modulefiles").string() + "`)");
      }
      v.reach.push_back("its store entry's lib/ directly: " +
                        (ctx.layout().sys_entry_dir(s.info.entry) / "lib").string());
      report.findings.push_back({"slot-not-loaded",
                                 doctor::Severity::info,
                                 "slot " + s.slot + " (cuDNN " + s.info.version +
                                     ") is active, but the loader drop-in "
                                     "serves " +
                                     v.soname + " from slot " + other +
                                     ": a process without its own cuDNN "
                                     "loads that build",
                                 {(ctx.layout().sys_entry_dir(s.info.entry) / "lib").string()},
                                 v.reach.front()});
    }
    report.slots.push_back(std::move(v));
  }
}

} // namespace

Status doctor(Context& ctx, const DoctorArgs& args, DoctorResult& out) {
  doctor::DoctorOptions o;
  o.root = ctx.opts().root;
  o.prefix = ctx.layout().sys_prefix().string();
  o.cuda_home = ctx.config().cuda_home;
  o.scan = args.scan;
  // The config's framework_paths: directories the framework gate searches, looked at as --scan.
  o.scan.insert(o.scan.end(), ctx.config().framework_paths.begin(),
                ctx.config().framework_paths.end());
  TRY(check_scan_dirs(o.scan));
  o.ld_library_path = env_or_empty("LD_LIBRARY_PATH");
  o.ld_preload = env_or_empty("LD_PRELOAD");
  if (auto conda = env_or_empty("CONDA_PREFIX"); !conda.empty() && conda[0] == '/') {
    o.conda_prefix = conda;
  }
  o.proc_dir = host::proc_dir();
  if (auto tk = host::detect_cuda(ctx.opts().root, ctx.config().cuda_home)) {
    o.cuda = doctor::ToolkitFacts{tk->major, tk->minor, tk->home.string(), tk->source};
  }
  // The site's compat.d rows (what a framework build expects) and its recall lists. Doctor
  // diagnoses broken hosts, so what cannot be used is a finding, not a refusal.
  if (auto compat = doctor::load_compat(ctx.opts().root)) {
    out.compat = std::move(*compat);
    o.compat = &*out.compat;
  } else {
    o.preset.push_back({"compat-overlay-invalid",
                        doctor::Severity::warning,
                        compat.error().message + "; the built-in data is used instead",
                        {"/etc/cudnnctl/compat.d"},
                        "fix or remove the file (row format: docs/COMPAT.md)"});
  }
  if (auto recalls = load_site_recalls(ctx)) {
    out.recalls = std::move(*recalls);
    o.recalls = &*out.recalls;
  } else {
    o.preset.push_back({"recall-lists-refused",
                        doctor::Severity::error,
                        recalls.error().message,
                        {recall::k_recalls_dir},
                        "install current, correctly signed lists (docs/COMPAT.md), or set "
                        "require_signed_recalls = false"});
  }
  TRY_ASSIGN(out.report, doctor::run_doctor(o));
  add_gpus(ctx, *out.report);
  add_slots(ctx, o.cuda, *out.report);
  int errors = out.report->count(doctor::Severity::error);
  if (errors > 0) {
    return fail(ErrorCode::problems,
                std::to_string(errors) + " error-level finding(s); each names its fix");
  }
  return {};
}

} // namespace cudnnctl::ops
