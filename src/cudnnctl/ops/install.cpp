// SPDX-License-Identifier: Apache-2.0
#include "ops/install.hpp"

#include "archive/extract.hpp"
#include "archive/naming.hpp"
#include "fetch/fetch.hpp"
#include "gates/recall.hpp"
#include "gates/requirements.hpp"
#include "gates/staged.hpp"
#include "ops/recalls.hpp"
#include "release/resolve.hpp"
#include "release/stream.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/progress.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace cudnnctl::ops {

Result<std::vector<std::string>> parse_components(const std::string& list) {
  std::vector<std::string> out;
  for (const auto& raw : util::split(list, ',')) {
    std::string c(util::trim(raw));
    if (c != "runtime" && c != "headers" && c != "static") {
      return fail(ErrorCode::usage, "unknown component \"" + c +
                                        "\" in --components (valid: runtime, headers, static)");
    }
    if (std::find(out.begin(), out.end(), c) == out.end()) {
      out.push_back(c);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// Which archive paths a component set keeps.
bool wanted_path(const std::vector<std::string>& components, std::string_view path) {
  auto has = [&](const char* c) {
    return std::find(components.begin(), components.end(), c) != components.end();
  };
  if (path.starts_with("include/") || path == "include") {
    return has("headers");
  }
  if (path.starts_with("lib/")) {
    if (path.ends_with(".a")) {
      return has("static");
    }
    return has("runtime") || path == "lib";
  }
  return true; // LICENSE and other top-level files
}

std::string lower_hex(std::string s) {
  for (auto& c : s) {
    if (c >= 'A' && c <= 'F') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return s;
}

Status check_free_space(const fs::path& dir, uint64_t needed) {
  struct statvfs st;
  if (::statvfs(dir.c_str(), &st) != 0) {
    return {};
  }
  uint64_t avail = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  if (avail < needed) {
    return fail(ErrorCode::environment, "not enough free space in " + dir.string() + ": " +
                                            util::human_bytes(avail) + " available, about " +
                                            util::human_bytes(needed) +
                                            " needed to extract the archive");
  }
  return {};
}

// -vv: where the time goes (docs/BENCHMARKS.md), in seconds since the stream began.
struct Timing {
  const Context& ctx;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  void operator()(const char* what) const {
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    ctx.info("timing: " + std::string(what) + " at " + std::to_string(dt.count()) + " s", 2);
  }
};

struct Streamed {
  std::vector<archive::Entry> entries;
  std::string url; // where the bytes came from
};

// One pass over the archive's bytes (docs/ARCHITECTURE.md "Streaming"): downloaded (or read
// from the cache or --archive), hashed, and extracted into `staging` at the same time. What
// was extracted is trusted only once size and sha256 matched.
Result<Streamed> stream_archive(Context& ctx, const fs::path& staging, const InstallOptions& o,
                                const release::Resolved& r,
                                const std::vector<std::string>& components,
                                std::optional<Timing>& timing) {
  const auto& pkg = r.selection.package;
  const std::string file_name = fs::path(pkg.relative_path).filename().string();
  const bool cached = !o.archive && util::exists_nofollow(ctx.layout().cache_dir() /
                                                          (lower_hex(pkg.sha256) + ".tar.xz"));
  util::Progress progress(util::progress_style(ctx.opts().json, ctx.opts().quiet, STDERR_FILENO),
                          {o.archive ? "read"
                           : cached  ? "cache"
                                     : "download",
                           "extract"});
  release::StreamExtractOptions so;
  so.extract.expected_top = archive::archive_top_name(pkg.relative_path);
  // Decompressed size: a multiple of the verified archive size (real cuDNN archives inflate
  // about 2.5x), with a floor for tiny archives. Not size*16 + 64 MiB: that let a 10 KB
  // archive inflate to 64 MiB (mkhostile's zip-bomb-ratio case was installed).
  so.extract.max_total_bytes = std::max<uint64_t>(pkg.size * 16, 16u << 20);
  so.extract.max_entry_bytes = so.extract.max_total_bytes;
  so.extract.max_entries = archive::entry_limit(pkg.size); // issue 14, B17
  so.extract.include = [&](std::string_view path, archive::EntryKind) {
    return wanted_path(components, path);
  };
  so.extract.writing = archive::FileWriting::background; // decompression alone on its thread
  so.expected_size = pkg.size;
  so.progress = [&](uint64_t consumed) { progress.update(1, consumed, pkg.size); };
  release::StreamExtractor extractor(staging, std::move(so));
  timing.emplace(Timing{ctx});
  auto on_bytes = [&](uint64_t done, uint64_t total) { progress.update(0, done, total); };
  fetch::StreamSink sink = extractor.sink();
  sink.restart = [&]() -> Status {
    ctx.info("the download started again from byte 0 (resume refused, retry or next mirror): "
             "extracting again");
    return extractor.sink().restart();
  };
  // Download (or read), hash and extract in one pass. Until the digest matched, the bytes
  // and what the extractor made of them are untrusted; a refused entry is final only then.
  Streamed out;
  if (o.archive) {
    ctx.info("verifying and extracting " + *o.archive + " (" + util::human_bytes(pkg.size) + ")");
    TRY(release::stream_file(*o.archive, pkg.size, pkg.sha256, sink, on_bytes));
    ctx.action("verified " + *o.archive + " (size and sha256 match the manifest)");
    out.url = "file://" + fs::absolute(*o.archive).string();
  } else {
    ctx.info((cached ? "extracting " + file_name + " from the cache"
                     : "downloading and extracting " + file_name) +
             " (" + util::human_bytes(pkg.size) + ")");
    fetch::ArchiveRequest req{r.archive_urls, pkg.sha256, pkg.size};
    fetch::Options fo = release::fetch_options(sources(ctx));
    fo.progress = on_bytes;
    TRY(fetch::fetch_archive(req, ctx.layout().cache_dir(), fo, &sink));
    ctx.action("downloaded and verified " + file_name);
    out.url = r.archive_urls.front();
  }
  progress.complete(0);
  (*timing)("archive verified");
  TRY(util::hook("after-download"));
  TRY_ASSIGN(out.entries, extractor.finish());
  (*timing)("extraction done");
  progress.update(1, pkg.size, pkg.size);
  progress.complete(1);
  progress.finish(true);
  TRY(util::hook("after-extract"));
  return out;
}

// The metadata of the entry the archive became: every file's sha256 as extracted.
store::EntryInfo entry_info(const std::string& name, const manifest::Selection& sel,
                            const std::vector<std::string>& components, const Streamed& s) {
  store::EntryInfo info = store::new_entry_info(name, sel.version, sel.label, sel.cuda_major,
                                                sel.platform, components, "installed");
  info.archive = store::ArchiveInfo{s.url, sel.package.sha256, sel.package.size};
  std::map<std::string, const archive::Entry*> by_path;
  for (const auto& e : s.entries) {
    by_path[e.path] = &e;
  }
  for (const auto& e : s.entries) {
    store::FileRecord f;
    f.path = e.path;
    f.mode = e.mode;
    switch (e.kind) {
    case archive::EntryKind::file:
      f.kind = "file";
      f.size = e.size;
      f.sha256 = e.sha256;
      break;
    case archive::EntryKind::hardlink:
      f.kind = "file";
      if (auto it = by_path.find(e.target); it != by_path.end()) {
        f.size = it->second->size;
        f.sha256 = it->second->sha256;
      }
      break;
    case archive::EntryKind::symlink:
      f.kind = "symlink";
      f.target = e.target;
      break;
    case archive::EntryKind::directory:
      f.kind = "dir";
      break;
    }
    info.files.push_back(std::move(f));
  }
  return info;
}

// Steps 2 to 6 of the protocol table: staging, the one pass, pre-switch validation, the
// sealed tree published as the store entry.
Status build_entry(Context& ctx, txn::Transaction& tx, const InstallOptions& o,
                   const release::Resolved& r, const std::vector<std::string>& components,
                   const std::string& name, gates::Findings& findings) {
  TRY_ASSIGN(txn::Staging staging, tx.stage()); // 2
  TRY(check_free_space(ctx.layout().store_dir(), r.selection.package.size * 2));
  std::optional<Timing> timing;
  TRY_ASSIGN(Streamed s, stream_archive(ctx, staging.path(), o, r, components, timing)); // 3
  gates::Env env = gates_env(ctx);
  TRY(gates::validate_staged(env, staging.path(), r.selection, components, findings)); // 4
  (*timing)("validated");
  store::EntryInfo info = entry_info(name, r.selection, components, s);
  TRY(staging.seal(info)); // 5
  (*timing)("staging synced");
  TRY(tx.publish(std::move(staging))); // 6
  (*timing)("entry published");
  struct rusage self {};
  if (::getrusage(RUSAGE_SELF, &self) == 0) {
    // This process only: the validation probe (a child that loads the candidate libraries)
    // is not the streaming pipeline.
    ctx.info("timing: peak RSS " + std::to_string(self.ru_maxrss) + " KiB", 2);
  }
  ctx.action("extracted " + store::describe(info) + " into " +
             ctx.layout().entry_dir(name).string());
  return {};
}

// The new entry as one transaction (protocol table, steps 1 to 12).
Status install_new(Context& ctx, const txn::Lock& lock, const InstallOptions& o,
                   const release::Resolved& r, const std::vector<std::string>& components,
                   const std::string& name, InstallResult& out) {
  auto intent = txn::Intent::build("install", name, "installing cuDNN " + r.selection.version);
  TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, ctx.site(), std::move(intent))); // 1
  TRY(tx.step(build_entry(ctx, tx, o, r, components, name, out.findings)));          // 2-6
  TRY(activate_new_generation(ctx, tx, name, "install " + o.version, o.demands(), out.findings,
                              out)); // 7-12
  out.said = Switched::activated;
  return {};
}

// Already in the store? Then no network is needed: a no-op or a switch to that entry.
// Returns nullopt when the install must resolve and download.
std::optional<Status> install_stored(Context& ctx, const InstallOptions& o,
                                     const release::Target& target,
                                     const std::vector<std::string>& components,
                                     const recall::RecallSet& recalls, InstallResult& out) {
  auto view = read_store(ctx);
  if (!view) {
    return fail(view.error());
  }
  std::vector<const store::EntryInfo*> local;
  for (const auto* e : match_entries(ctx, *view, o.version)) {
    bool same = e->platform == target.platform && e->components == components &&
                e->origin == "installed" && (!target.cuda || e->cuda_major == *target.cuda);
    if (same) {
      local.push_back(e);
    }
  }
  const auto* active = view->active_entry();
  for (const auto* e : local) {
    if (active && e->name == active->name) {
      fill_active(ctx, *view, out);
      out.entry = e->name;
      out.version = e->version;
      if (e->archive) {
        out.archive = ArchiveRef{e->version,      e->cuda_major,      e->platform,
                                 e->archive->url, e->archive->sha256, e->archive->size};
      }
      out.described = store::describe(*e);
      out.active_generation = view->current;
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
  manifest::Selection sel;
  sel.label = e.label;
  sel.version = e.version;
  sel.platform = e.platform;
  sel.cuda_major = e.cuda_major;
  gates::Env env = gates_env(ctx);
  if (auto ok = gates::check_recall(env, recalls, e.version, e.cuda_major, out.findings); !ok) {
    return ok;
  }
  if (auto ok = gates::check_requirements(env, sel, o.demands(), out.findings); !ok) {
    return ok;
  }
  auto activate = [&]() -> Status {
    const std::string command = "install " + o.version;
    if (ctx.dry_run()) {
      TRY(adopt_before_install(ctx, nullptr, out.adoption, out)); // says what it would adopt
      return activate_entry(ctx, e.name, command, o.demands(), out);
    }
    TRY_ASSIGN(txn::Lock held, lock(ctx));
    TRY(adopt_before_install(ctx, &held, out.adoption, out)); // never overwrite them silently
    return activate_entry_locked(ctx, held, e.name, command, o.demands(), out);
  };
  return activate();
}

// --dry-run of an install that needs the archive: what would happen, nothing written.
Status install_dry_run(Context& ctx, const release::Resolved& r, const std::string& name,
                       InstallResult& out) {
  const auto& sel = r.selection;
  TRY(adopt_before_install(ctx, nullptr, out.adoption, out)); // says what it would adopt
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  out.active = gen_info(ctx, view, view.current);
  bool present = view.entry(name) != nullptr;
  const auto* active = view.active_entry();
  out.changed = !(active && active->name == name);
  if (out.changed) {
    if (!present) {
      ctx.action("would download " + r.archive_urls.front());
      ctx.action("would install cuDNN " + sel.version + " (CUDA " + std::to_string(sel.cuda_major) +
                 ", " + sel.platform + ") as " + name);
    }
    ctx.action("would activate " + name + " as a new generation");
  }
  out.install_said =
      out.changed ? InstallResult::Said::would_install : InstallResult::Said::would_not_change;
  return {};
}

} // namespace

Status install(Context& ctx, const InstallOptions& o, InstallResult& out) {
  TRY(release::parse_version_arg(o.version));
  std::vector<std::string> components =
      o.components.empty() ? store::default_components() : o.components;
  TRY_ASSIGN(release::Target target, release::resolve_target(ctx.layout(), ctx.config(),
                                                             ctx.opts().platform, ctx.opts().cuda));
  TRY(recover_pending(ctx)); // the store view below must not include a crashed install's entry
  // What was asked for, and (below) the full version the command ends with: the Ansible
  // module reports them, also under --dry-run.
  out.requested = o.version;
  // Signed recall lists: read before anything is fetched or written (a list refused under
  // require_signed_recalls stops the install here).
  TRY_ASSIGN(recall::RecallSet recalls, load_site_recalls(ctx));
  if (auto done = install_stored(ctx, o, target, components, recalls, out)) {
    return *done;
  }
  if (!target.cuda) {
    ctx.warn("no CUDA toolkit found under " + ctx.layout().host(ctx.config().cuda_home).string() +
             "; choosing the newest CUDA variant the release offers (pass --cuda to choose)");
  } else {
    ctx.info("CUDA major " + std::to_string(*target.cuda) + " from " + target.cuda_source, 1);
  }
  TRY_ASSIGN(release::Resolved r,
             release::resolve_release(sources(ctx), ctx.notes(), o.version, target));
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
  TRY(gates::check_requirements(env, sel, o.demands(), out.findings));
  if (ctx.dry_run()) {
    return install_dry_run(ctx, r, name, out);
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  // Unmanaged cuDNN in the CUDA home: adopted first, never overwritten.
  TRY(adopt_before_install(ctx, &held, out.adoption, out));
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  // Check again under the lock: another cudnnctl may have done the work meanwhile.
  if (const auto* active = view.active_entry(); active && active->name == name) {
    fill_active(ctx, view, out);
    out.described = store::describe(*active);
    out.said = Switched::already_active;
    return {};
  }
  if (view.entry(name)) {
    return activate_entry_locked(ctx, held, name, "install " + o.version, o.demands(), out);
  }
  return install_new(ctx, held, o, r, components, name, out);
}

} // namespace cudnnctl::ops
