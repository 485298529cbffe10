// SPDX-License-Identifier: Apache-2.0
// `adopt`: scan the CUDA home, back up, import, replace by links.
#include "ops/adopt.hpp"

#include "archive/checks.hpp"
#include "archive/dest_tree.hpp"
#include "host/dpkg.hpp"
#include "host/dpkg_owned.hpp"
#include "host/host.hpp"
#include "integrate/cuda_home.hpp"
#include "integrate/home_links.hpp"
#include "ops/activate.hpp"
#include "ops/adopt_scan.hpp"
#include "ops/adopt_steps.hpp"
#include "ops/plan.hpp"
#include "store/backup.hpp"
#include "store/slots.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/sha256.hpp"
#include "util/stamp.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace cudnnctl::ops {

namespace {

// Whether warn_plan also says what the scan left alone.
enum class LeftAlone { say, skip };

// The scan's defects (and, with LeftAlone::say, what it left alone) as warnings: the libraries
// copied without `cp -P` are one line in human mode (each under -v and in --json).
void warn_plan(Context& ctx, const AdoptPlan& plan, LeftAlone left_alone) {
  std::vector<std::string> copies;
  for (const auto& w : plan.defects) {
    if (w.find(" is a regular file where a symlink to ") != std::string::npos) {
      copies.push_back(w);
    } else {
      ctx.warn(w);
    }
  }
  if (copies.size() == 1) {
    ctx.warn(copies.front());
  } else if (!copies.empty()) {
    ctx.notes().warn_many(std::to_string(copies.size()) + " libraries in " + plan.home.string() +
                              " are regular files where symlinks belong (copied without "
                              "`cp -P`?); adopted byte for byte as they are (-v lists them)",
                          copies);
  }
  if (left_alone == LeftAlone::say) {
    for (const auto& w : plan.left_alone) {
      ctx.warn(w);
    }
  }
}

// What the scan found, for the result; its defects and what it left alone are warnings.
AdoptFound describe_plan(Context& ctx, const AdoptPlan& plan) {
  AdoptFound d;
  for (const auto& c : plan.files) {
    d.files.push_back(c.found.path.string());
  }
  d.home = plan.home.string();
  d.version = plan.version;
  d.version_source = plan.version_source;
  d.entry = plan.entry;
  d.defects = plan.defects;
  d.left_alone = plan.left_alone;
  warn_plan(ctx, plan, LeftAlone::say);
  return d;
}

// Step 4: the records let the CUDA-home step replace these exact originals by links (their
// bytes are now in the entry and the backup); written before the switch, so a recovery that
// rolls forward finishes the replacement.
Status record_originals(Context& ctx, const AdoptPlan& plan, const fs::path& backup) {
  const auto& layout = ctx.layout();
  TRY_ASSIGN(integrate::HomeState state, integrate::read_home_state(layout));
  std::string backup_sys = (fs::path("/var/lib/cudnnctl/backups") / backup.filename()).string();
  for (const auto& c : plan.files) {
    std::erase_if(state.adopted, [&](const auto& r) { return r.path == c.found.path.string(); });
    integrate::AdoptedRecord r;
    r.path = c.found.path.string();
    r.entry = plan.entry;
    r.file = c.entry_path;
    put_original_facts(c, r);
    r.backup = backup_sys;
    state.adopted.push_back(std::move(r));
  }
  TRY(integrate::write_home_state(layout, state));
  return util::hook("after-adopt-records");
}

// The adopt transaction (docs/ARCHITECTURE.md "adopt", steps 1 to 10), with the lock held
// and a non-empty plan. `backup` is set once the backup is written.
// `slot`: the slot the adoption activates (store/slots.hpp; "" for the primary slot).
Result<Adopted> adopt_locked(Context& ctx, const txn::Lock& lock, const AdoptPlan& plan,
                             std::optional<std::string>& backup_written, Outcome& outcome,
                             const std::string& slot = "") {
  const auto& layout = ctx.layout();
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  auto intent =
      txn::Intent::build("adopt", plan.entry, "adopting the cuDNN in " + plan.home.string())
          .in_slot(slot);
  TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, ctx.site(), std::move(intent))); // 1
  std::string hash8 = plan.entry.substr(plan.entry.size() - 8);
  fs::path backup =
      layout.backups_dir() / ("adopt-" + plan.version + "-" + util::compact_utc_timestamp() + "-" +
                              hash8 + archive::backup_extension(archive::default_compression()));
  TRY(tx.step(back_up(ctx, plan, backup))); // 2
  if (!view.entry(plan.entry)) {
    TRY(tx.step(import_entry(ctx, tx, plan))); // 3
  }
  TRY(tx.step(record_originals(ctx, plan, backup))); // 4
  backup_written = backup.string();
  gates::Findings none; // no post-switch checks: adopt imports what it finds
  TRY_ASSIGN(int n, activate_new_generation(ctx, tx, plan.entry, "adopt " + plan.home.string(),
                                            std::nullopt, none, outcome)); // 5-10
  ctx.action("adopted cuDNN " + plan.version + " from " + plan.home.string() + " (" +
             std::to_string(plan.files.size()) + " files) as generation " + std::to_string(n) +
             (slot.empty() ? std::string() : " in slot " + slot) + "; originals backed up to " +
             backup.string());
  return Adopted{plan.version,      plan.entry,      plan.home.string(),
                 plan.files.size(), backup.string(), n};
}

// Nothing new to adopt: make sure the links name the active generation (they can be stale
// after a switch that found the CUDA home read-only). Each link is replaced atomically; the
// step is idempotent, so no journal is needed.
Status repair_links(Context& ctx, AdoptResult& out) {
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  size_t before = ctx.notes().actions().size();
  if (const auto* active = view.active_entry()) {
    TRY(integrate::link_cuda_home(ctx.layout(), ctx.config(), active->name, ctx.notes()));
  }
  TRY(fill_active(ctx, out));
  out.changed = ctx.notes().actions().size() != before;
  out.repaired = out.changed;
  out.said = AdoptResult::Said::nothing_to_adopt;
  return {};
}

// The homes `adopt` scans with several CUDA homes configured: every one (a home whose real
// directory an earlier one has is scanned once), or the one --cuda-home names, which must be
// one of them.
Result<std::vector<fs::path>> homes_to_adopt(const Context& ctx, const AdoptOptions& o) {
  const auto homes = ctx.config().homes();
  std::vector<fs::path> out;
  std::vector<fs::path> seen;
  for (const auto& h : homes) {
    auto real = integrate::locate_home(ctx.layout(), h).real_home;
    if (!real.empty() && std::find(seen.begin(), seen.end(), real) != seen.end()) {
      continue;
    }
    seen.push_back(real);
    if (!o.cuda_home ||
        fs::path(*o.cuda_home).lexically_normal() == fs::path(h).lexically_normal() ||
        (!real.empty() && integrate::locate_home(ctx.layout(), *o.cuda_home).real_home == real)) {
      out.push_back(h);
    }
  }
  if (out.empty()) {
    return fail(ErrorCode::usage, "--cuda-home " + *o.cuda_home +
                                      " is not one of the CUDA homes cudnnctl manages (" +
                                      util::join(homes, ", ") + ", config cuda_homes in " +
                                      ctx.layout().config_file().string() +
                                      "): add it there, or name one of them; nothing was changed");
  }
  return out;
}

// Why a home's cuDNN is not adopted with several CUDA homes: its CUDA major is unknown, so no
// home would get its links. Empty: it can be adopted.
std::string not_adoptable(const Context& ctx, const AdoptPlan& plan) {
  if (plan.files.empty() || host::detect_cuda(ctx.layout().root(), plan.home)) {
    return {};
  }
  return "not adopting the cuDNN " + plan.version + " in " + plan.home.string() +
         ": the CUDA major of its toolkit cannot be told (no version.json, cuda_runtime_api.h "
         "or libcudart there), and with several CUDA homes (cuda_homes) each home gets only the "
         "build of its own CUDA major; nothing was changed there";
}

// `adopt` with several CUDA homes (config cuda_homes): each home's unmanaged cuDNN becomes its
// own store entry and generation, one transaction per home, activated in its slot (the
// primary slot when nothing is active or the slot is the primary's, else alongside), so every
// home ends up linked to what it held. Nothing to adopt anywhere: the links are repaired.
Status adopt_homes(Context& ctx, const AdoptOptions& o, AdoptResult& out) {
  TRY_ASSIGN(auto homes, homes_to_adopt(ctx, o));
  auto scan = [&](const fs::path& home) -> Result<std::optional<AdoptPlan>> {
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    TRY_ASSIGN(AdoptPlan plan, plan_adopt(ctx, view, home));
    if (plan.dirs.real_home.empty()) {
      ctx.warn("no CUDA home at " + ctx.layout().host(home).string() + " (named in cuda_homes)");
      return std::optional<AdoptPlan>();
    }
    return std::optional<AdoptPlan>(std::move(plan));
  };
  std::optional<txn::Lock> held;
  if (!ctx.dry_run()) {
    auto locked = lock(ctx);
    if (!locked) {
      return fail(locked.error());
    }
    held.emplace(std::move(*locked));
  }
  int next = 0;
  for (const auto& home : homes) {
    TRY_ASSIGN(auto plan, scan(home));
    if (!plan) {
      continue;
    }
    AdoptFound found = describe_plan(ctx, *plan);
    if (!out.found || !plan->files.empty()) {
      out.found = found;
    }
    out.homes_found.push_back(std::move(found));
    if (plan->files.empty()) {
      continue;
    }
    if (auto why = not_adoptable(ctx, *plan); !why.empty()) {
      ctx.warn(why);
      continue;
    }
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    TRY_ASSIGN(std::string slot, switch_slot(ctx, view, plan->version, plan->cuda,
                                             SlotChoice::alongside, Say::nothing));
    if (ctx.dry_run()) {
      TRY_ASSIGN(int n, store::next_generation_number(ctx.layout(), view.generations));
      n = std::max(n, next);
      next = n + 1;
      ctx.action("would adopt " + std::to_string(plan->files.size()) + " files of cuDNN " +
                 plan->version + " in " + plan->home.string() + " into slot " +
                 store::slot_id(plan->version, plan->cuda) + ": backed up in " +
                 ctx.layout().backups_dir().string() + ", imported as store entry " + plan->entry +
                 ", activated as generation " + std::to_string(n));
      out.changed = true;
      continue;
    }
    TRY_ASSIGN(Adopted a, adopt_locked(ctx, *held, *plan, out.backup, out, slot));
    out.adopted = a;
    out.homes_adopted.push_back(std::move(a));
  }
  if (ctx.dry_run()) {
    TRY(fill_active(ctx, out));
    out.said = out.changed ? AdoptResult::Said::would_adopt : AdoptResult::Said::nothing_to_adopt;
    return {};
  }
  if (out.homes_adopted.empty()) {
    return repair_links(ctx, out);
  }
  out.said = AdoptResult::Said::adopted;
  return {};
}

} // namespace

std::vector<DpkgPackage> report_dpkg_cudnn(Context& ctx) {
  std::vector<DpkgPackage> list;
  auto db = host::DpkgDb::load(ctx.layout().root());
  if (!db) {
    ctx.warn("cannot read the dpkg database: " + db.error().message);
    return list;
  }
  for (const auto& p : db->packages()) {
    if (p.name.find("cudnn") == std::string::npos || !p.present()) {
      continue;
    }
    list.push_back({p.name, p.version, p.held()});
    std::string what = "dpkg has " + p.name + " " + p.version + " installed" +
                       (p.held() ? " and held (apt-mark hold)" : "") +
                       ": cudnnctl leaves its files alone; the ld.so cache lists cudnnctl's "
                       "active generation first (00-cudnnctl.conf)";
    if (p.held()) {
      ctx.warn(what);
    } else {
      ctx.info(what);
    }
  }
  return list;
}

Status adopt_before_install(Context& ctx, const txn::Lock* lock, PreInstall& out, Outcome& outcome,
                            const std::function<Status()>& before_adopting) {
  out.dpkg = report_dpkg_cudnn(ctx);
  if (!ctx.config().manage_cuda_home || ctx.user_mode()) { // --user: no CUDA-home links
    return {};
  }
  if (ctx.config().homes().size() > 1) {
    // Several CUDA homes: `adopt` puts each home's cuDNN into the slot of its CUDA major;
    // install only says so. A home holding hand-made files gets no links (it is left alone),
    // so nothing there is overwritten.
    for (const auto& h : ctx.config().homes()) {
      if (auto u = find_unmanaged(ctx, h)) {
        ctx.warn(h + " holds " + std::to_string(u->files) + " cuDNN files" +
                 (u->version.empty() ? std::string() : " (cuDNN " + u->version + ")") +
                 " that cudnnctl does not manage: left alone, no links are made there; run "
                 "`cudnnctl adopt` to take them over (with several cuda_homes install does not "
                 "adopt)");
      }
    }
    return {};
  }
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(AdoptPlan plan, plan_adopt(ctx, view, ctx.config().cuda_home));
  if (plan.files.empty()) {
    return {};
  }
  if (auto ok = check_replaceable(ctx, plan); !ok) {
    // Not adopted, and so not touched: the CUDA-home step leaves a directory with unmanaged
    // files alone.
    ctx.warn("not adopting the cuDNN " + plan.version + " in " + plan.home.string() + ": " +
             ok.error().message);
    return {};
  }
  std::string what = "the unmanaged cuDNN " + plan.version + " in " + plan.home.string();
  if (ctx.dry_run() || !lock) {
    std::vector<std::string> files;
    for (const auto& c : plan.files) {
      files.push_back(c.found.path.string());
    }
    TRY_ASSIGN(int n, store::next_generation_number(ctx.layout(), view.generations));
    ctx.action("would adopt " + what + " (" + std::to_string(plan.files.size()) +
                   " files) before installing: backed up in " +
                   ctx.layout().backups_dir().string() + ", imported as store entry " + plan.entry +
                   ", activated as generation " + std::to_string(n),
               std::move(files));
    warn_plan(ctx, plan, LeftAlone::skip);
    return {};
  }
  if (before_adopting) {
    TRY(before_adopting());
  }
  ctx.info("found " + std::to_string(plan.files.size()) + " cuDNN files (cuDNN " + plan.version +
           ") in " + plan.home.string() +
           " that cudnnctl does not manage: adopting them first (backup, store entry, "
           "generation) so that nothing is overwritten");
  ctx.action("adopting " + what + " before installing");
  warn_plan(ctx, plan, LeftAlone::say);
  auto adopted = adopt_locked(ctx, *lock, plan, out.backup, outcome);
  if (!adopted) {
    Error e = adopted.error();
    e.add_context("adopting the cuDNN files cudnnctl does not manage in " + plan.home.string() +
                  " (install never overwrites them silently; move them away or set "
                  "manage_cuda_home = false)");
    return fail(e);
  }
  adopted->generation =
      outcome.active ? std::optional<int>(outcome.active->generation) : std::nullopt;
  out.adopted = *adopted;
  return {};
}

Status adopt(Context& ctx, const AdoptOptions& o, AdoptResult& out) {
  if (ctx.user_mode()) {
    return fail(ErrorCode::needs_root,
                "adopt manages a CUDA home, which --user mode never touches: run it as root "
                "without --user (a --user install activates through its module files and "
                "`cudnnctl env`)");
  }
  if (o.undo) {
    return adopt_undo(ctx, out);
  }
  if (!ctx.config().manage_cuda_home) {
    return fail(ErrorCode::usage, "CUDA-home management is off (manage_cuda_home = false in " +
                                      ctx.layout().config_file().string() + ")");
  }
  fs::path home = o.cuda_home.value_or(ctx.config().cuda_home);
  if (!home.is_absolute()) {
    return fail(ErrorCode::usage, "--cuda-home must be an absolute path inside the root, got \"" +
                                      home.string() + "\"");
  }
  if (ctx.config().homes().size() > 1) {
    return adopt_homes(ctx, o, out);
  }
  auto plan_now = [&]() -> Result<AdoptPlan> {
    TRY_ASSIGN(store::StoreView view, read_store(ctx));
    TRY_ASSIGN(AdoptPlan plan, plan_adopt(ctx, view, home));
    if (plan.dirs.real_home.empty()) {
      return fail(ErrorCode::usage, "no CUDA home at " + ctx.layout().host(home).string() +
                                        " (pass --cuda-home DIR)");
    }
    return plan;
  };
  if (ctx.dry_run()) {
    TRY_ASSIGN(AdoptPlan plan, plan_now());
    TRY(fill_active(ctx, out));
    out.found = describe_plan(ctx, plan);
    out.changed = !plan.files.empty();
    out.said =
        plan.files.empty() ? AdoptResult::Said::nothing_to_adopt : AdoptResult::Said::would_adopt;
    if (!plan.files.empty()) {
      std::vector<std::string> files;
      for (const auto& c : plan.files) {
        files.push_back(c.found.path.string());
      }
      TRY_ASSIGN(store::StoreView view, read_store(ctx));
      TRY_ASSIGN(int n, store::next_generation_number(ctx.layout(), view.generations));
      ctx.action("would adopt " + std::to_string(plan.files.size()) + " files of cuDNN " +
                     plan.version + " in " + plan.home.string() + ": backed up in " +
                     ctx.layout().backups_dir().string() + ", imported as store entry " +
                     plan.entry,
                 std::move(files));
      TRY(plan_switch(ctx, plan.entry, n, std::nullopt));
    }
    return {};
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  TRY_ASSIGN(AdoptPlan plan, plan_now());
  out.found = describe_plan(ctx, plan);
  if (plan.files.empty()) {
    return repair_links(ctx, out);
  }
  TRY_ASSIGN(out.adopted, adopt_locked(ctx, held, plan, out.backup, out));
  out.said = AdoptResult::Said::adopted;
  return {};
}

} // namespace cudnnctl::ops
