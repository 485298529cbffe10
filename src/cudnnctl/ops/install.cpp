// SPDX-License-Identifier: Apache-2.0
#include "ops/install.hpp"

#include "archive/extract.hpp"
#include "archive/naming.hpp"
#include "fetch/fetch.hpp"
#include "gates/recall.hpp"
#include "gates/requirements.hpp"
#include "gates/staged.hpp"
#include "gpu/prefetch.hpp"
#include "ops/early_probe.hpp"
#include "ops/framework_gate.hpp"
#include "ops/install_request.hpp"
#include "ops/offline.hpp"
#include "ops/plan.hpp"
#include "ops/recalls.hpp"
#include "ops/search.hpp"
#include "release/pass.hpp"
#include "release/resolve.hpp"
#include "store/cache.hpp"
#include "store/entry.hpp"
#include "util/fs.hpp"
#include "util/progress.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <memory>
#include <sys/resource.h>
#include <unistd.h>

namespace cudnnctl::ops {

namespace {

// The compute-capability check whose inventory (install's GPU child, cudnnctl-smoke --warm,
// started before the release was resolved) was not in yet at check_requirements (issue 21).
// settle() waits for it and judges it (gates::finish_gpu_arch); a refusal is remembered, so that
// install_new undoes the transaction as if it had never begun and leaves the cache as it was.
struct LateGpuCheck {
  gpu::InventoryPrefetch* gpus = nullptr;
  const manifest::Selection* selection = nullptr;
  bool refused = false;

  [[nodiscard]] bool pending() const { return gpus && gpus->pending(); }
  // The GPU child, waiting for the runtime probe's request (null: the probe starts its own).
  [[nodiscard]] smoke::WarmHelper* warm_helper() const {
    return gpus ? gpus->warm_helper() : nullptr;
  }
  // The same child while the pass runs, for the probe's early loads (null: none started).
  [[nodiscard]] smoke::WarmHelper* early_helper() const {
    return gpus ? gpus->early_helper() : nullptr;
  }
  // Nothing pending: no-op. `said`: the -v line that says when the check was judged.
  Status settle(Context& ctx, gates::Findings& findings, const char* said = nullptr) {
    if (!pending()) {
      return {};
    }
    gates::Env env = gates_env(ctx);
    Status st = gates::finish_gpu_arch(env, *selection, *gpus, findings);
    refused = !st;
    if (said) {
      auto c = std::find_if(findings.checks.begin(), findings.checks.end(),
                            [](const gates::Check& k) { return k.name == "gpu-arch"; });
      if (c != findings.checks.end()) {
        ctx.info(std::string(said) + c->message, 1);
      }
    }
    return st;
  }
};

// The ArchiveRef's form, from the pass's choice.
void record_form(ArchiveRef& ref, const release::FormChoice& form) {
  ref.form = form.form;
  ref.form_reason = form.reason;
  if (form.repack) {
    ref.repack = *form.repack;
  }
}

// The request of step 3's pass (release::run_pass) with what install adds: the form in `ref`
// and the transaction's notes.
release::PassRequest pass_request(Context& ctx, txn::Transaction& tx, const InstallJob& job,
                                  const fs::path& staging, ArchiveRef& ref) {
  const auto& o = job.req.o;
  release::PassRequest req{job.r,
                           job.req.components,
                           o.archive,
                           o.sidecar,
                           sources(ctx),
                           ctx.layout().cache_dir(),
                           staging,
                           util::progress_style(ctx.opts().json, ctx.opts().quiet, STDERR_FILENO),
                           {},
                           {},
                           {}};
  req.chose = [&ref, &tx](const release::FormChoice& form) {
    record_form(ref, form);
    tx.note("archive_form", ref.form);
    tx.note("archive_form_reason", ref.form_reason);
  };
  return req;
}

// The runtime probe's early loads in the GPU child `early` while a repack's pass verifies its
// files (ops/early_probe.hpp); null: none.
void add_early_probe(release::PassRequest& req, const Context& ctx, const InstallJob& job,
                     smoke::WarmHelper* early) {
  if (!early) {
    return;
  }
  const fs::path staging = req.staging;
  const manifest::Selection* sel = &job.r.selection;
  const std::vector<std::string>* components = &job.req.components;
  req.repack_hooks = [=, &ctx](const release::SidecarIndex& index) {
    release::PassHooks hooks;
    auto request = gates::runtime_probe_request(staging, *sel, *components);
    if (!request) {
      return hooks;
    }
    auto probe =
        std::make_shared<EarlyProbe>(*early, fs::absolute(staging), std::move(*request), index);
    hooks.file_done = [probe](const archive::Entry& e) { probe->file_done(e); };
    hooks.link_done = [probe] { probe->link_done(); };
    hooks.restarted = [probe] { probe->abandon(); };
    hooks.finished = [probe, &ctx] {
      ctx.info("runtime probe: the GPU child loaded " + std::to_string(probe->sent().size()) +
                   " of its " + std::to_string(probe->wanted()) +
                   " libraries as the pass verified them against the sidecar",
               2);
    };
    return hooks;
  };
  req.repack_refused = [early] {
    early->discard_early(); // what it loaded is of the refused repack's tree
  };
}

// Steps 2 to 6 of the protocol table: staging, the one pass, pre-switch validation, the
// sealed tree published as the store entry.
Status build_entry(Context& ctx, txn::Transaction& tx, const InstallJob& job, InstallResult& out,
                   LateGpuCheck& gpus) {
  const auto& r = job.r;
  const auto& components = job.req.components;
  gates::Findings& findings = out.findings;
  ArchiveRef ignored;
  ArchiveRef& ref = out.archive ? *out.archive : ignored;
  TRY_ASSIGN(txn::Staging staging, tx.stage()); // 2
  TRY(release::check_free_space(ctx.layout().store_dir(), r.selection.package.size * 2));
  release::PassClock timing(ctx.notes());
  release::PassRequest req = pass_request(ctx, tx, job, staging.path(), ref);
  add_early_probe(req, ctx, job, gpus.early_helper());
  auto streamed = release::run_pass(req, ctx.notes(), timing); // 3
  if (gpus.pending()) {
    // The compute-capability check that was still waiting for the GPU inventory: judged now,
    // before anything is validated. Its refusal stands also for a pass that failed (the
    // build could not have been installed anyway).
    Status judged = gpus.settle(ctx, findings, "GPU check finished during the download: ");
    timing("gpu check joined");
    TRY(std::move(judged));
  }
  TRY_ASSIGN(release::PassResult s, std::move(streamed));
  gates::Env env = gates_env(ctx);
  // The GPU child that reported the inventory runs the runtime probe: the NVIDIA driver it
  // initialised beside the pass (the version checks need it) is not initialised again.
  env.warm_probe = gpus.warm_helper();
  if (!env.warm_probe) {
    ctx.info(std::string("the GPU child ") +
                 (gpus.gpus ? "did not report its inventory whole" : "was not started") +
                 ": a runtime probe runs in a child of its own",
             2);
  }
  TRY(gates::validate_staged(env, staging.path(), r.selection, components, findings)); // 4
  timing("validated");
  store::EntryInfo info = release::entry_info(job.name, r.selection, components, s);
  TRY(staging.seal(info)); // 5
  timing("staging synced");
  TRY(tx.publish(std::move(staging))); // 6
  timing("entry published");
  struct rusage self {};
  if (::getrusage(RUSAGE_SELF, &self) == 0) {
    // This process only: the validation probe (a child that loads the candidate libraries)
    // is not the streaming pipeline.
    ctx.info("timing: peak RSS " + std::to_string(self.ru_maxrss) + " KiB", 2);
  }
  ctx.action("extracted " + store::describe(info) + " into " +
             ctx.layout().entry_dir(job.name).string());
  return {};
}

// The new entry as one transaction (protocol table, steps 1 to 12).
Status install_new(Context& ctx, const txn::Lock& lock, const InstallJob& job, InstallResult& out,
                   LateGpuCheck& gpus) {
  const auto& o = job.req.o;
  const auto& r = job.r;
  const auto& name = job.name;
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(std::string slot, switch_slot(ctx, view, r.selection.version, r.selection.cuda_major,
                                           slot_choice(o.alongside)));
  auto intent =
      txn::Intent::build("install", name, "installing cuDNN " + r.selection.version).in_slot(slot);
  TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, ctx.site(), std::move(intent))); // 1
  const auto cache_before = gpus.pending() ? store::cache_names(ctx.layout()) : std::nullopt;
  Status built = build_entry(ctx, tx, job, out, gpus); // 2-6
  if (!built && gpus.refused) {
    // The refusal that would have come before the lock had the inventory been in: nothing of
    // this install stays (no history record, the cache as it was).
    Error e = tx.withdraw(built.error());
    if (Status dropped = store::drop_new_cached(ctx.layout(), cache_before); !dropped) {
      ctx.warn("the download cache keeps the refused archive: " + dropped.error().full_message());
    }
    return fail(std::move(e));
  }
  TRY(tx.step(std::move(built)));
  TRY(activate_new_generation(ctx, tx, name, "install " + o.version, o.demands(), out.findings,
                              out)); // 7-12
  out.slot = slot;
  if (!slot.empty()) {
    std::vector<std::string> w;
    if (auto after = store::read_store(ctx.layout(), w)) {
      out.slot_active = gen_info(ctx, *after, after->slot_current(slot));
    }
  }
  out.said = Switched::activated;
  return {};
}

// Already in the store? Then no network is needed: a no-op or a switch to that entry.
// Returns nullopt when the install must resolve and download.
std::optional<Status> install_stored(Context& ctx, const InstallRequest& req,
                                     const recall::RecallSet& recalls, InstallResult& out) {
  const auto& o = req.o;
  const auto& target = req.target;
  const auto& components = req.components;
  auto view = read_store(ctx);
  if (!view) {
    return fail(view.error());
  }
  std::vector<const store::EntryInfo*> local;
  for (const auto* e : match_entries(ctx, *view, req.version)) {
    bool same = e->platform == target.platform && e->components == components &&
                e->origin == "installed" && (!target.cuda || e->cuda_major == *target.cuda);
    if (same) {
      local.push_back(e);
    }
  }
  for (const auto* e : local) {
    if (active_generation_of(*view, e->name)) {
      fill_active(ctx, *view, out);
      out.entry = e->name;
      out.version = e->version;
      if (e->archive) {
        out.archive = ArchiveRef{e->version,      e->cuda_major,      e->platform,
                                 e->archive->url, e->archive->sha256, e->archive->size};
      }
      out.described = store::describe(*e);
      out.active_generation = active_generation_of(*view, e->name);
      out.said = Switched::already_active;
      if (const auto* hit = recalls.find_recall(e->version, e->cuda_major)) {
        out.findings.recalled = *hit;
        ctx.warn("the active " + recall::describe(*hit, e->version, e->cuda_major) +
                 ": switch to another release (`cudnnctl use VERSION` or `cudnnctl rollback`)");
      }
      return Status{};
    }
  }
  if (local.size() != 1 && (local.size() <= 1 || !target.cuda)) {
    return std::nullopt;
  }
  const store::EntryInfo& e = *local.front();
  ctx.info("cuDNN " + store::describe(e) + " is already in the store; activating it");
  out.entry = e.name;
  out.version = e.version;
  // The same requirements as a download of that build (CUDA toolkit, driver,
  // --require-gpu): being in the store does not make it fit this host.
  manifest::Selection sel = selection_of(e);
  gates::Env env = gates_env(ctx);
  if (auto ok = gates::check_recall(env, recalls, e.version, e.cuda_major, out.findings); !ok) {
    return ok;
  }
  if (auto ok = gates::check_requirements(env, sel, o.demands(), out.findings); !ok) {
    return ok;
  }
  // Into which slot: a refusal comes before the lock (and before any adoption).
  if (auto slot =
          switch_slot(ctx, *view, e.version, e.cuda_major, slot_choice(o.alongside), Say::nothing);
      !slot) {
    return fail(slot.error());
  }
  if (auto ok = gate_frameworks(ctx, {serving(e.version)}, "switching to cuDNN " + e.version,
                                e.cuda_major, out);
      !ok) {
    return ok;
  }
  auto activate = [&]() -> std::optional<Status> {
    const std::string command = "install " + o.version;
    if (ctx.dry_run()) {
      TRY(adopt_before_install(ctx, nullptr, out.adoption, out)); // says what it would adopt
      return activate_entry(ctx, e.name, command, o.demands(), out);
    }
    TRY_ASSIGN(txn::Lock held, lock(ctx));
    // Check again under the lock: a gc or remove that ran between the look above and the lock
    // took the entry away (issue 34, F13): then this install downloads it, as if never stored.
    if (!store::read_entry(ctx.layout(), e.name)) {
      ctx.info("store entry " + e.name +
               " was removed meanwhile (by a gc or remove); installing it again");
      return std::nullopt; // the lock is released here; the download path takes it again
    }
    remember_recall_lists(ctx, recalls); // under the lock, past the recall gate (F7)
    TRY(adopt_before_install(ctx, &held, out.adoption, out)); // never overwrite them silently
    return activate_entry_locked(ctx, held, e.name, command, o.demands(), out);
  };
  return activate();
}

Status install_steps(Context& ctx, const InstallOptions& given, InstallResult& out) {
  TRY_ASSIGN(InstallRequest req, parse_request(ctx, given));
  InstallOptions& o = req.o;
  const release::Target& target = req.target;
  const std::vector<std::string>& components = req.components;
  // What was asked for, and (below) the full version the command ends with: the Ansible
  // module reports them, also under --dry-run.
  out.requested = o.version;
  if (release::is_partial_version(req.version)) {
    // "latest", "9", "9.2": the newest release the mirrors offer for this CUDA and platform.
    TRY_ASSIGN(req.version, resolve_partial(ctx, req.version, target.platform, target.cuda));
    o.version = req.version.text;
  }
  // Signed recall lists: read before anything is fetched or written (a list refused under
  // require_signed_recalls stops the install here).
  TRY_ASSIGN(recall::RecallSet recalls, load_site_recalls(ctx));
  TRY(recover_pending(ctx)); // the store view below must not include a crashed install's entry
  if (auto done = install_stored(ctx, req, recalls, out)) {
    return *done;
  }
  // The GPU child (issue 21): the compute-capability check's inventory, started now so that it
  // overlaps the release resolution and, when it is not in by then, the download; the same
  // child then waits, the driver initialised, for the runtime probe (build_entry). Not for
  // --dry-run, whose check_requirements runs --gpus itself, as before. Joined on every path
  // (its destructor).
  std::optional<gpu::InventoryPrefetch> prefetch;
  if (!ctx.dry_run()) {
    prefetch.emplace(gates_env(ctx).smoke_timeout());
  }
  if (!target.cuda && !target.active_cuda) {
    // The release's resolution warns once, naming the major it took and the others (issue 37).
    ctx.info("no CUDA toolkit found under " + ctx.layout().host(ctx.config().cuda_home).string() +
                 "; choosing the newest CUDA variant the release offers (pass --cuda to choose)",
             1);
  } else if (target.cuda) { // else the active build's major, if the release has it (resolve)
    ctx.info("CUDA major " + std::to_string(*target.cuda) + " from " + target.cuda_source, 1);
  }
  auto resolved = release::resolve_release(sources(ctx), ctx.notes(), req.version, target);
  if (!resolved && o.archive && !ctx.opts().manifest &&
      category(resolved.error().code) == ErrorCode::network) {
    // Offline (or no mirror has it): NVIDIA's published manifest data shipped with cudnnctl.
    ctx.info("no mirror can vouch for " + *o.archive + " (" + resolved.error().full_message() +
             "); checking it against NVIDIA's manifest shipped with cudnnctl");
    resolved = resolve_offline(*o.archive, req.version, target, resolved.error());
  }
  TRY_ASSIGN(release::Resolved r, std::move(resolved));
  const auto& sel = r.selection;
  std::string name = store::entry_name(sel.version, sel.cuda_major, sel.platform, components);
  out.archive =
      ArchiveRef{sel.version,        sel.cuda_major,  sel.platform, r.archive_urls.front(),
                 sel.package.sha256, sel.package.size};
  out.entry = name;
  out.version = sel.version;
  out.components = components;
  out.platform = sel.platform;
  out.cuda = sel.cuda_major;
  gates::Env env = gates_env(ctx);
  TRY(gates::check_recall(env, recalls, sel.version, sel.cuda_major, out.findings));
  TRY(gates::check_requirements(env, sel, o.demands(), out.findings,
                                prefetch ? &*prefetch : nullptr));
  LateGpuCheck late{prefetch ? &*prefetch : nullptr, &sel};
  const InstallJob job{req, r, name};
  {
    // Into which slot: a refusal (a plain install into a slot active alongside) comes before
    // the lock and the download.
    TRY_ASSIGN(store::StoreView pre, read_store(ctx));
    if (!active_generation_of(pre, name)) {
      TRY(switch_slot(ctx, pre, sel.version, sel.cuda_major, slot_choice(o.alongside),
                      Say::nothing));
      // The frameworks on the node that would load it, before any download (exit 7).
      TRY(gate_frameworks(ctx, {serving(sel.version)}, "installing cuDNN " + sel.version,
                          sel.cuda_major, out));
    }
  }
  if (ctx.dry_run()) {
    return install_dry_run(ctx, job, out);
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  remember_recall_lists(ctx, recalls); // under the lock, past the recall gate (F7)
  // Unmanaged cuDNN in the CUDA home: adopted first, never overwritten (and never before the
  // compute-capability check has judged).
  TRY(adopt_before_install(ctx, &held, out.adoption, out,
                           [&] { return late.settle(ctx, out.findings); }));
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  // Check again under the lock: another cudnnctl may have done the work meanwhile.
  if (active_generation_of(view, name)) {
    TRY(late.settle(ctx, out.findings));
    fill_active(ctx, view, out);
    out.described = store::describe(*view.entry(name));
    out.said = Switched::already_active;
    return {};
  }
  if (view.entry(name)) {
    TRY(late.settle(ctx, out.findings));
    return activate_entry_locked(ctx, held, name, "install " + o.version, o.demands(), out);
  }
  if (late.pending() && late.gpus->ready()) {
    TRY(late.settle(ctx, out.findings)); // in by now: judged before the transaction
  }
  return install_new(ctx, held, job, out, late);
}

} // namespace

Status install(Context& ctx, const InstallOptions& o, InstallResult& out) {
  Status st = install_steps(ctx, o, out);
  if (ctx.dry_run()) {
    return st;
  }
  out.cache_kept = !o.no_cache && ctx.config().keep_cache;
  const bool resumable = !st && category(st.error().code) == ErrorCode::network;
  if (!out.cache_kept && out.archive && !resumable) {
    // What a Docker layer must not keep: nothing of this install stays in the cache.
    Status dropped = store::drop_cached(ctx.layout(), out.archive->sha256);
    if (dropped && out.archive->repack) {
      dropped = store::drop_cached(ctx.layout(), out.archive->repack->sha256);
    }
    if (!dropped) {
      ctx.warn("--no-cache: " + dropped.error().full_message());
    } else {
      ctx.action("removed the archive from the download cache (--no-cache)");
    }
  }
  out.cache_bytes = store::cache_bytes(ctx.layout());
  return st;
}

} // namespace cudnnctl::ops
