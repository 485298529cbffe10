// SPDX-License-Identifier: Apache-2.0
#include "ops/install.hpp"

#include "archive/extract.hpp"
#include "archive/naming.hpp"
#include "fetch/fetch.hpp"
#include "ops/activate.hpp"
#include "ops/adopt.hpp"
#include "ops/postswitch.hpp"
#include "ops/resolve.hpp"
#include "ops/state.hpp"
#include "ops/stream_install.hpp"
#include "ops/transaction.hpp"
#include "ops/validate_staged.hpp"
#include "store/history.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/progress.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <chrono>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace cudnnctl::ops {

using nlohmann::json;

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

json archive_json(const manifest::Selection& s, const std::string& url) {
  return {{"version", s.version}, {"cuda", s.cuda_major},       {"platform", s.platform},
          {"url", url},           {"sha256", s.package.sha256}, {"size", s.package.size}};
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

// Downloads (or reads) the archive and extracts it into a new staging directory in one
// pass, then publishes it as the store entry `name` once size and sha256 matched. Journal
// phases: prepare (staging named before the first byte) -> entry-committed.
Status build_entry(Context& ctx, store::Journal& jr, const InstallOptions& o, const Resolved& r,
                   const std::vector<std::string>& components) {
  const auto& layout = ctx.layout();
  const auto& sel = r.selection;
  const auto& pkg = sel.package;
  TRY_ASSIGN(fs::path staging, begin_staging(ctx, jr));
  uint64_t needed = pkg.size * 2;
  TRY(check_free_space(layout.store_dir(), needed));

  const std::string file_name = fs::path(pkg.relative_path).filename().string();
  const bool cached = !o.archive && util::exists_nofollow(ctx.layout().cache_dir() /
                                                          (lower_hex(pkg.sha256) + ".tar.xz"));
  util::Progress progress(util::progress_style(ctx.opts().json, ctx.opts().quiet, STDERR_FILENO),
                          {o.archive ? "read"
                           : cached  ? "cache"
                                     : "download",
                           "extract"});
  StreamExtractOptions so;
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
  StreamExtractor extractor(staging, std::move(so));
  // -vv: where the time goes (docs/BENCHMARKS.md).
  const auto t0 = std::chrono::steady_clock::now();
  auto timing = [&](const char* what) {
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    ctx.info("timing: " + std::string(what) + " at " + std::to_string(dt.count()) + " s", 2);
  };
  auto on_bytes = [&](uint64_t done, uint64_t total) { progress.update(0, done, total); };
  fetch::StreamSink sink = extractor.sink();
  sink.restart = [&]() -> Status {
    ctx.info("the download started again from byte 0 (resume refused, retry or next mirror): "
             "extracting again");
    return extractor.sink().restart();
  };

  // Download (or read), hash and extract in one pass. Until the digest matched, the bytes
  // and what the extractor made of them are untrusted; a refused entry is final only then.
  std::string url;
  if (o.archive) {
    ctx.info("verifying and extracting " + *o.archive + " (" + util::human_bytes(pkg.size) + ")");
    TRY(stream_file(*o.archive, pkg.size, pkg.sha256, sink, on_bytes));
    ctx.action("verified " + *o.archive + " (size and sha256 match the manifest)");
    url = "file://" + fs::absolute(*o.archive).string();
  } else {
    ctx.info((cached ? "extracting " + file_name + " from the cache"
                     : "downloading and extracting " + file_name) +
             " (" + util::human_bytes(pkg.size) + ")");
    fetch::ArchiveRequest req{r.archive_urls, pkg.sha256, pkg.size};
    fetch::Options fo = fetch_options(ctx);
    fo.progress = on_bytes;
    TRY(fetch::fetch_archive(req, layout.cache_dir(), fo, &sink));
    ctx.action("downloaded and verified " + file_name);
    url = r.archive_urls.front();
  }
  progress.complete(0);
  timing("archive verified");
  TRY(util::hook("after-download"));
  TRY_ASSIGN(auto entries, extractor.finish());
  timing("extraction done");
  progress.update(1, pkg.size, pkg.size);
  progress.complete(1);
  progress.finish(true);
  TRY(util::hook("after-extract"));

  TRY(validate_staged(ctx, staging, sel, components));
  timing("validated");

  store::EntryInfo info;
  info.name = jr.entry;
  info.version = sel.version;
  info.label = sel.label;
  info.cuda_major = sel.cuda_major;
  info.platform = sel.platform;
  info.components = components;
  info.origin = "installed";
  info.created = util::utc_timestamp();
  info.archive = store::ArchiveInfo{url, pkg.sha256, pkg.size};
  std::map<std::string, const archive::Entry*> by_path;
  for (const auto& e : entries) {
    by_path[e.path] = &e;
  }
  for (const auto& e : entries) {
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
  TRY(seal_staging(staging, info));
  timing("staging synced");
  TRY(publish_staging(ctx, jr, staging));
  timing("entry published");
  struct rusage self {};
  if (::getrusage(RUSAGE_SELF, &self) == 0) {
    // This process only: the validation probe (a child that loads the candidate libraries)
    // is not the streaming pipeline.
    ctx.info("timing: peak RSS " + std::to_string(self.ru_maxrss) + " KiB", 2);
  }
  ctx.action("extracted " + describe(info) + " into " + layout.entry_dir(jr.entry).string());
  return {};
}

} // namespace

Status install(Context& ctx, const InstallOptions& o) {
  TRY(parse_version_arg(o.version));
  std::vector<std::string> components =
      o.components.empty() ? store::default_components() : o.components;
  TRY_ASSIGN(Target target, resolve_target(ctx));
  TRY(recover_pending(ctx)); // the store view below must not include a crashed install's entry
  // What was asked for, and (below) the full version the command ends with: the Ansible
  // module reports them, also under --dry-run.
  ctx.report().data["requested"] = o.version;

  // Already installed? Then no network is needed: a no-op or a switch to that entry.
  {
    TRY_ASSIGN(StoreView view, read_store(ctx));
    std::vector<const store::EntryInfo*> local;
    for (const auto* e : match_entries(ctx, view, o.version)) {
      bool same = e->platform == target.platform && e->components == components &&
                  e->origin == "installed" && (!target.cuda || e->cuda_major == *target.cuda);
      if (same) {
        local.push_back(e);
      }
    }
    const auto* active = view.active_entry();
    for (const auto* e : local) {
      if (active && e->name == active->name) {
        ctx.report().active = gen_info(ctx, view, view.current);
        ctx.report().previous =
            gen_info(ctx, view, store::rollback_target(view.generations, *view.current));
        ctx.report().data["entry"] = e->name;
        ctx.report().data["version"] = e->version;
        if (e->archive) {
          ctx.report().data["archive"] = {
              {"version", e->version},  {"cuda", e->cuda_major},        {"platform", e->platform},
              {"url", e->archive->url}, {"sha256", e->archive->sha256}, {"size", e->archive->size}};
        }
        ctx.line("cuDNN " + describe(*e) + " is already active (generation " +
                 std::to_string(*view.current) + "); nothing to do");
        return {};
      }
    }
    if (local.size() == 1 || (local.size() > 1 && target.cuda)) {
      const store::EntryInfo& e = *local.front();
      ctx.info("cuDNN " + describe(e) + " is already in the store; activating it");
      ctx.report().data["entry"] = e.name;
      ctx.report().data["version"] = e.version;
      // The same requirements as a download of that build (CUDA toolkit, driver,
      // --require-gpu): being in the store does not make it fit this host.
      manifest::Selection sel;
      sel.label = e.label;
      sel.version = e.version;
      sel.platform = e.platform;
      sel.cuda_major = e.cuda_major;
      TRY(check_requirements(ctx, sel, o));
      if (ctx.dry_run()) {
        TRY(adopt_before_install(ctx)); // says what it would adopt, changes nothing
        return activate_entry(ctx, e.name, "install " + o.version, o);
      }
      TRY_ASSIGN(util::LockFile lock, begin_mutation(ctx));
      TRY(adopt_before_install(ctx)); // as below: never overwrite unmanaged files silently
      return activate_entry_locked(ctx, e.name, "install " + o.version, o);
    }
  }

  if (!target.cuda) {
    ctx.warn("no CUDA toolkit found under " + ctx.layout().host(ctx.config().cuda_home).string() +
             "; choosing the newest CUDA variant the release offers (pass --cuda to choose)");
  } else {
    ctx.info("CUDA major " + std::to_string(*target.cuda) + " from " + target.cuda_source, 1);
  }
  TRY_ASSIGN(Resolved r, resolve_release(ctx, o.version, target));
  const auto& sel = r.selection;
  std::string name = store::entry_name(sel.version, sel.cuda_major, sel.platform, components);
  ctx.report().data["archive"] = archive_json(sel, r.archive_urls.front());
  ctx.report().data["entry"] = name;
  ctx.report().data["version"] = sel.version;
  ctx.report().data["components"] = components;

  TRY(check_requirements(ctx, sel, o));

  if (ctx.dry_run()) {
    TRY(adopt_before_install(ctx)); // says what it would adopt, changes nothing
    TRY_ASSIGN(StoreView view, read_store(ctx));
    ctx.report().active = gen_info(ctx, view, view.current);
    bool present = view.entry(name) != nullptr;
    const auto* active = view.active_entry();
    ctx.report().changed = !(active && active->name == name);
    if (ctx.report().changed) {
      if (!present) {
        ctx.action("would download " + r.archive_urls.front());
        ctx.action("would install cuDNN " + sel.version + " (CUDA " +
                   std::to_string(sel.cuda_major) + ", " + sel.platform + ") as " + name);
      }
      ctx.action("would activate " + name + " as a new generation");
    }
    ctx.line(ctx.report().changed ? "would install and activate cuDNN " + sel.version + " (CUDA " +
                                        std::to_string(sel.cuda_major) + ", " + sel.platform + ")"
                                  : "cuDNN " + sel.version + " is already active; nothing to do");
    return {};
  }

  TRY_ASSIGN(util::LockFile lock, begin_mutation(ctx));
  TRY(adopt_before_install(
      ctx)); // unmanaged cuDNN in the CUDA home: adopted first, never overwritten
  TRY_ASSIGN(StoreView view, read_store(ctx));
  // Check again under the lock: another cudnnctl may have done the work meanwhile.
  if (const auto* active = view.active_entry(); active && active->name == name) {
    ctx.report().active = gen_info(ctx, view, view.current);
    ctx.report().previous =
        gen_info(ctx, view, store::rollback_target(view.generations, *view.current));
    ctx.line("cuDNN " + describe(*active) + " is already active; nothing to do");
    return {};
  }
  if (view.entry(name)) {
    return activate_entry_locked(ctx, name, "install " + o.version, o);
  }

  store::Journal jr = store::new_journal("install", ctx.opts().argv_line);
  jr.entry = name;
  jr.from_generation = view.current;
  TRY(store::write_journal(ctx.layout(), jr));
  if (auto st = build_entry(ctx, jr, o, r, components); !st) {
    // Nothing was activated: undo what this transaction published and clear the journal.
    Error e = st.error();
    e.add_context("installing cuDNN " + sel.version);
    abandon_transaction(ctx, jr, e);
    return fail(e);
  }
  TRY(switch_to_new_generation(ctx, jr, view, "install " + o.version, o));
  say_active(ctx);
  return {};
}

} // namespace cudnnctl::ops
