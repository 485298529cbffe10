// SPDX-License-Identifier: Apache-2.0
#include "ops/install.hpp"

#include "archive/extract.hpp"
#include "archive/naming.hpp"
#include "fetch/fetch.hpp"
#include "gates/recall.hpp"
#include "gates/requirements.hpp"
#include "gates/staged.hpp"
#include "gpu/prefetch.hpp"
#include "manifest/pins.hpp"
#include "ops/early_probe.hpp"
#include "ops/offline.hpp"
#include "ops/plan.hpp"
#include "ops/recalls.hpp"
#include "ops/search.hpp"
#include "release/repack_source.hpp"
#include "release/resolve.hpp"
#include "release/sidecar.hpp"
#include "release/stream.hpp"
#include "store/cache.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/progress.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "util/thread_cpu.hpp"

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

// -vv: which of the pass's threads was busy and which side of the byte pipe waited.
void say_pass_threads(const Context& ctx, const release::StreamExtractor& extractor,
                      double main_cpu0) {
  const auto [write_wait, read_wait] = extractor.pipe_waits();
  std::string line = "timing: pipe waits: the transfer " + std::to_string(write_wait) +
                     " s for space, the extraction " + std::to_string(read_wait) +
                     " s for bytes; thread CPU: transfer " +
                     std::to_string(util::thread_cpu_seconds() - main_cpu0) + " s";
  for (const auto& [name, s] : util::take_thread_cpu()) {
    line += ", " + name + " " + std::to_string(s) + " s";
  }
  std::string waits;
  for (const auto& [what, s] : util::take_waits()) {
    waits += (waits.empty() ? "; producers waited " : ", ") + std::to_string(s) + " s for " + what;
  }
  ctx.info(line + waits, 2);
}

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

struct Streamed {
  std::vector<archive::Entry> entries;
  std::string url; // where the bytes came from
};

// What one pass reads: NVIDIA's archive, or the mirror's repack of it.
struct Form {
  bool repack = false;
  std::string file_name;
  std::string sha256;
  uint64_t size = 0;
  std::vector<std::string> urls;
  // A repack whose sidecar lists them: the digests of every util::k_sha256_chunk of the
  // repack, checked instead of `sha256` (and every larger file's, by check_extracted).
  std::vector<std::string> chunks;
};

Form original_form(const release::Resolved& r) {
  const auto& pkg = r.selection.package;
  return Form{false,          fs::path(pkg.relative_path).filename().string(),
              pkg.sha256,     pkg.size,
              r.archive_urls, {}};
}

// Whether the mirrors serve a repack this host may use (release/repack_source.hpp); unreadable
// pins are a reason to warn and install NVIDIA's archive.
release::RepackLookup lookup_repack(Context& ctx, const release::Resolved& r) {
  auto pins = manifest::load_pins(sources(ctx).pins_dir);
  if (!pins) {
    return release::RepackLookup{std::nullopt, pins.error().message, true};
  }
  return release::find_repack(sources(ctx), r, *pins);
}

// --archive FILE.tar.zst: a site mirror's repack, installed only through a pinned sidecar.
bool is_repack_file(const std::string& path) {
  return path.ends_with(".tar.zst");
}

// Where the sidecar of the local repack `archive` may be: --sidecar, else <sha256>.json
// beside it, else cudnnctl-repack/<sha256>.json in its directory or one of the two above it
// (a copy of the mirror's tree: cudnn/<platform>/ under the mirror's root).
std::vector<fs::path> sidecar_candidates(const InstallOptions& o, const std::string& original_sha) {
  if (o.sidecar) {
    return {fs::path(*o.sidecar)};
  }
  const fs::path dir = fs::absolute(*o.archive).parent_path();
  const std::string name =
      manifest::repack_sidecar_name(original_sha); // cudnnctl-repack/<sha>.json
  std::vector<fs::path> out = {dir / fs::path(name).filename()};
  fs::path up = dir;
  for (int i = 0; i < 3 && !up.empty(); ++i, up = up.parent_path()) {
    out.push_back(up / name);
    if (up == up.root_path()) {
      break;
    }
  }
  return out;
}

// The sidecar of the local repack, accepted only when a site pin names it (the same chain as
// a mirror's repack: docs/BENCHMARKS.md). Errors: usage (no sidecar found), integrity (no pin
// for a repack of this archive, the sidecar differs from its pin or names another archive).
Result<release::RepackSource> local_repack(Context& ctx, const InstallOptions& o,
                                           const release::Resolved& r) {
  const auto& pkg = r.selection.package;
  TRY_ASSIGN(manifest::PinSet pins, manifest::load_pins(sources(ctx).pins_dir));
  const manifest::Pin* pin = pins.find_repack(pkg.sha256);
  if (pin == nullptr) {
    return fail(ErrorCode::integrity,
                *o.archive + " is a repack of " + pkg.relative_path +
                    ", but no site pin names a repack of that archive; install NVIDIA's .tar.xz, "
                    "or trust the site mirror's cudnnctl-pins.sha256 (copy it into " +
                    sources(ctx).pins_dir.string() + ")");
  }
  std::optional<fs::path> found;
  std::string looked;
  for (const auto& c : sidecar_candidates(o, pkg.sha256)) {
    looked += (looked.empty() ? "" : ", ") + c.string();
    if (util::exists_nofollow(c)) {
      found = c;
      break;
    }
  }
  if (!found) {
    return fail(ErrorCode::usage, "no sidecar for the repack " + *o.archive + " (looked for " +
                                      looked + "); name it with --sidecar FILE");
  }
  TRY_ASSIGN(std::string bytes, util::read_file(*found, release::k_max_sidecar));
  const std::string sha = util::sha256_hex(bytes);
  if (sha != pin->sha256) {
    return fail(ErrorCode::integrity, "repack sidecar " + found->string() + " has sha256 " + sha +
                                          ", but the site pin (" + pin->source + ") says " +
                                          pin->sha256 +
                                          "; it does not describe a repack "
                                          "this host trusts");
  }
  TRY_ASSIGN(release::Sidecar sidecar, release::parse_sidecar(bytes, found->string()));
  TRY(release::check_sidecar_names(sidecar, pkg, found->string()));
  release::RepackSource src;
  src.sidecar_url = "file://" + fs::absolute(*found).string();
  src.sidecar_sha256 = pin->sha256;
  src.urls = {"file://" + fs::absolute(*o.archive).string()};
  src.sidecar = std::move(sidecar);
  return src;
}

// What the repack's bytes were checked against, for the "verified" line.
std::string repack_checked(const Form& form) {
  return form.chunks.empty() ? " (size and sha256 match its pinned sidecar)"
                             : " (size and the sha256 of every 1 MiB match its pinned sidecar)";
}

// What a pass does per entry beyond the extraction's own checks (archive::ExtractOptions).
struct PassHooks {
  std::function<Status(const archive::Entry&)> vet;
  std::function<void(const archive::Entry&)> file_done;
  std::function<void()> link_done;
  std::function<void()> restarted; // the pass starts again from byte 0, its tree emptied
};

// One pass over the archive's bytes (docs/ARCHITECTURE.md "Streaming"): downloaded (or read
// from the cache or --archive), hashed, and extracted into `staging` at the same time. What
// was extracted is trusted only once size and sha256 matched.
Result<Streamed> stream_archive(Context& ctx, const fs::path& staging, const InstallOptions& o,
                                const release::Resolved& r, const Form& form,
                                const std::vector<std::string>& components,
                                std::optional<Timing>& timing, const PassHooks& hooks = {}) {
  const auto& pkg = r.selection.package;
  const std::string suffix = form.repack ? ".tar.zst" : ".tar.xz";
  const std::string& file_name = form.file_name;
  const bool cached =
      !o.archive &&
      util::exists_nofollow(fetch::cached_archive(ctx.layout().cache_dir(), form.sha256, suffix));
  util::Progress progress(util::progress_style(ctx.opts().json, ctx.opts().quiet, STDERR_FILENO),
                          {o.archive ? "read"
                           : cached  ? "cache"
                                     : "download",
                           "extract"});
  release::StreamExtractOptions so;
  // The same top folder, caps and entry limit for the repack as for the original
  // (release/sidecar.hpp).
  release::set_install_limits(so.extract, pkg);
  so.extract.include = [&](std::string_view path, archive::EntryKind) {
    return wanted_path(components, path);
  };
  so.extract.writing = archive::FileWriting::background; // decompression alone on its thread
  so.extract.format =
      form.repack ? archive::ArchiveFormat::tar_zstd : archive::ArchiveFormat::tar_xz;
  so.extract.hash_chunk = form.chunks.empty() ? 0 : util::k_sha256_chunk;
  so.extract.vet = hooks.vet;
  so.extract.file_done = hooks.file_done;
  so.extract.link_done = hooks.link_done;
  so.expected_size = form.size;
  so.progress = [&](uint64_t consumed) { progress.update(1, consumed, form.size); };
  release::StreamExtractor extractor(staging, std::move(so));
  timing.emplace(Timing{ctx});
  (void)util::take_thread_cpu(); // an earlier pass's
  const double main_cpu0 = util::thread_cpu_seconds();
  auto on_bytes = [&](uint64_t done, uint64_t total) { progress.update(0, done, total); };
  fetch::StreamSink sink = extractor.sink();
  sink.restart = [&]() -> Status {
    ctx.info("the download started again from byte 0 (resume refused, retry or next mirror): "
             "extracting again");
    TRY(extractor.sink().restart()); // the stopped pass's threads have ended
    if (hooks.restarted) {
      hooks.restarted();
    }
    return {};
  };
  // Download (or read), hash and extract in one pass. Until the digest matched, the bytes
  // and what the extractor made of them are untrusted; a refused entry is final only then.
  Streamed out;
  if (o.archive) {
    ctx.info("verifying and extracting " + *o.archive + " (" + util::human_bytes(form.size) + ")");
    TRY(release::stream_file(*o.archive, form.size, form.sha256, sink, on_bytes, form.chunks));
    ctx.action("verified " + *o.archive +
               (form.repack ? repack_checked(form) : " (size and sha256 match the manifest)"));
    out.url = "file://" + fs::absolute(*o.archive).string();
  } else {
    ctx.info((cached ? "extracting " + file_name + " from the cache"
                     : "downloading and extracting " + file_name) +
             " (" + util::human_bytes(form.size) + ")");
    fetch::ArchiveRequest req{form.urls, form.sha256, form.size, suffix, form.chunks};
    req.durable = false; // a cache entry: re-verified before every use (fetch.hpp)
    fetch::Options fo = release::fetch_options(sources(ctx));
    fo.progress = on_bytes;
    TRY(fetch::fetch_archive(req, ctx.layout().cache_dir(), fo, &sink));
    ctx.action("downloaded and verified " + file_name + (form.repack ? repack_checked(form) : ""));
    out.url = form.urls.front();
  }
  progress.complete(0);
  (*timing)("archive verified");
  TRY(util::hook("after-download"));
  TRY_ASSIGN(out.entries, extractor.finish());
  (*timing)("extraction done");
  say_pass_threads(ctx, extractor, main_cpu0);
  progress.update(1, form.size, form.size);
  progress.complete(1);
  progress.finish(true);
  TRY(util::hook("after-extract"));
  return out;
}

// The repack's pass: streamed (size and sha256 of the pinned sidecar), then every extracted
// file checked against the sidecar. On success `ref` and the transaction's notes say so.
Result<Streamed> stream_repack(Context& ctx, txn::Transaction& tx, const fs::path& staging,
                               const InstallOptions& o, const release::Resolved& r,
                               const std::vector<std::string>& components,
                               std::optional<Timing>& timing, ArchiveRef& ref,
                               const release::RepackSource& src, const std::string& why,
                               smoke::WarmHelper* early) {
  Form form{true,
            fs::path(src.sidecar.repack_path).filename().string(),
            src.sidecar.repack_sha256,
            src.sidecar.repack_size,
            src.urls,
            {}};
  if (release::lists_chunks(src.sidecar)) {
    form.chunks = src.sidecar.repack_chunks; // hashed on several threads
  } else {
    ctx.info("the sidecar lists no chunk digests (an older mirror): the repack and its files are "
             "checked by their whole sha256");
  }
  // Nothing the sidecar does not list reaches the disk; the GPU child loads each library of
  // the runtime probe once it and what it needs are verified (ops/early_probe.hpp).
  const release::SidecarIndex index(src.sidecar);
  PassHooks hooks;
  hooks.vet = [&](const archive::Entry& e) { return index.vet(e); };
  std::optional<EarlyProbe> early_probe;
  if (early) {
    if (auto request = gates::runtime_probe_request(staging, r.selection, components)) {
      early_probe.emplace(*early, fs::absolute(staging), std::move(*request), index);
      hooks.file_done = [&](const archive::Entry& e) { early_probe->file_done(e); };
      hooks.link_done = [&] { early_probe->link_done(); };
      hooks.restarted = [&] { early_probe->abandon(); };
    }
  }
  TRY_ASSIGN(Streamed s, stream_archive(ctx, staging, o, r, form, components, timing, hooks));
  if (early_probe) {
    ctx.info("runtime probe: the GPU child loaded " + std::to_string(early_probe->sent().size()) +
                 " of its " + std::to_string(early_probe->wanted()) +
                 " libraries as the pass verified them against the sidecar",
             2);
  }
  TRY(release::check_extracted(
      src.sidecar, s.entries,
      [&](std::string_view path, archive::EntryKind) { return wanted_path(components, path); }));
  ref.form = "repack";
  ref.form_reason = why + " and every extracted file matches it";
  ref.repack =
      RepackRef{form.urls.front(), form.sha256, form.size, src.sidecar_url, src.sidecar_sha256};
  tx.note("archive_form", ref.form);
  tx.note("archive_form_reason", ref.form_reason);
  ctx.action("checked every extracted file against the repack's sidecar");
  // The entry records NVIDIA's archive (URL, sha256, size): what its files are.
  s.url = r.archive_urls.front();
  return s;
}

// The pass of step 3: the mirror's repack when a site pin vouches for its sidecar and every
// extracted file matches the sidecar, else (with a warning when a repack was there but
// refused) NVIDIA's archive. --archive FILE.tar.zst: that repack through its pinned sidecar,
// or a refusal (there is no original to fall back to). Which form, and why, goes into `ref`
// and the history record.
Result<Streamed> stream_best(Context& ctx, txn::Transaction& tx, const fs::path& staging,
                             const InstallOptions& o, const release::Resolved& r,
                             const std::vector<std::string>& components,
                             std::optional<Timing>& timing, ArchiveRef& ref,
                             smoke::WarmHelper* early) {
  std::string reason = "--archive names the file to install";
  if (o.archive && is_repack_file(*o.archive)) {
    TRY_ASSIGN(release::RepackSource src, local_repack(ctx, o, r));
    auto s = stream_repack(
        ctx, tx, staging, o, r, components, timing, ref, src,
        "--archive names a repack whose sidecar " + src.sidecar_url + " the site pins", early);
    if (!s) {
      Error e = s.error();
      e.add_context("installing the repack " + *o.archive);
      return fail(std::move(e));
    }
    return s;
  }
  if (!o.archive) {
    release::RepackLookup look = lookup_repack(ctx, r);
    reason = look.reason;
    if (const auto& src = look.source) {
      auto s = stream_repack(ctx, tx, staging, o, r, components, timing, ref, *src,
                             "the site pins its sidecar " + src->sidecar_url, early);
      if (s) {
        return s;
      }
      if (early) {
        early->discard_early(); // what it loaded is of the refused repack's tree
      }
      Error e = s.error();
      if (e.code == ErrorCode::environment || e.code == ErrorCode::internal) {
        return fail(std::move(e));
      }
      reason = "the repack was refused: " + e.full_message();
      look.warn = true;
      // The original starts from an empty staging directory: nothing of the repack stays.
      TRY(util::remove_tree(staging));
      TRY(util::make_dirs(staging));
    }
    if (look.warn) {
      ctx.warn("installing NVIDIA's original archive instead of the mirror's repack: " + reason);
    } else {
      ctx.info("installing NVIDIA's original archive (" + reason + ")", 1);
    }
  }
  ref.form = "xz";
  ref.form_reason = reason;
  tx.note("archive_form", ref.form);
  tx.note("archive_form_reason", ref.form_reason);
  return stream_archive(ctx, staging, o, r, original_form(r), components, timing);
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
                   const std::string& name, gates::Findings& findings, ArchiveRef& ref,
                   LateGpuCheck& gpus) {
  TRY_ASSIGN(txn::Staging staging, tx.stage()); // 2
  TRY(check_free_space(ctx.layout().store_dir(), r.selection.package.size * 2));
  std::optional<Timing> timing;
  auto streamed =
      stream_best(ctx, tx, staging.path(), o, r, components, timing, ref, gpus.early_helper()); // 3
  if (gpus.pending()) {
    // The compute-capability check that was still waiting for the GPU inventory: judged now,
    // before anything is validated. Its refusal stands also for a pass that failed (the
    // build could not have been installed anyway).
    Status judged = gpus.settle(ctx, findings, "GPU check finished during the download: ");
    if (timing) {
      (*timing)("gpu check joined");
    }
    TRY(std::move(judged));
  }
  TRY_ASSIGN(Streamed s, std::move(streamed));
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
                   const std::string& name, InstallResult& out, LateGpuCheck& gpus) {
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  TRY_ASSIGN(std::string slot,
             switch_slot(ctx, view, r.selection.version, r.selection.cuda_major, o.alongside));
  auto intent =
      txn::Intent::build("install", name, "installing cuDNN " + r.selection.version).in_slot(slot);
  TRY_ASSIGN(auto tx, txn::Transaction::begin(lock, ctx.site(), std::move(intent))); // 1
  ArchiveRef ignored;
  ArchiveRef& ref = out.archive ? *out.archive : ignored;
  const auto cache_before = gpus.pending() ? store::cache_names(ctx.layout()) : std::nullopt;
  Status built = build_entry(ctx, tx, o, r, components, name, out.findings, ref, gpus); // 2-6
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
  if (auto slot = switch_slot(ctx, *view, e.version, e.cuda_major, o.alongside, false); !slot) {
    return fail(slot.error());
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

// --dry-run: which form of the archive the install would stream, and why (the same choice as
// stream_best, up to the checks that need the bytes); a local repack that would be refused is
// refused here too. A repack is a step of the plan here; NVIDIA's archive is the plan's
// download step (below), with the reason in its detail.
Status dry_run_form(Context& ctx, const InstallOptions& o, const release::Resolved& r,
                    ArchiveRef& ref) {
  if (o.archive && is_repack_file(*o.archive)) {
    TRY_ASSIGN(release::RepackSource src, local_repack(ctx, o, r));
    ref.form = "repack";
    ref.form_reason = "--archive names a repack whose sidecar " + src.sidecar_url +
                      " the site pins; every extracted file would be checked against it";
    ref.repack = RepackRef{src.urls.front(), src.sidecar.repack_sha256, src.sidecar.repack_size,
                           src.sidecar_url, src.sidecar_sha256};
    ctx.action("would verify and extract the repack " + *o.archive + " (" + ref.form_reason + ")");
    return {};
  }
  if (o.archive) {
    ref.form = "xz";
    ref.form_reason = "--archive names the file to install";
    return {};
  }
  release::RepackLookup look = lookup_repack(ctx, r);
  if (const auto& src = look.source) {
    ref.form = "repack";
    ref.form_reason = "the site pins its sidecar " + src->sidecar_url +
                      "; every extracted file would be checked against it (NVIDIA's archive "
                      "if any check fails)";
    ref.repack = RepackRef{src->urls.front(), src->sidecar.repack_sha256, src->sidecar.repack_size,
                           src->sidecar_url, src->sidecar_sha256};
    ctx.action("would download the mirror's repack " + src->urls.front() + " instead of " +
               r.archive_urls.front() + " (" + ref.form_reason + ")");
    return {};
  }
  ref.form = "xz";
  ref.form_reason = look.reason;
  if (look.warn) {
    ctx.warn("would install NVIDIA's original archive instead of the mirror's repack: " +
             look.reason);
  }
  return {};
}

// --dry-run of an install that needs the archive: what would happen, in order, nothing
// written (ops/plan.hpp).
Status install_dry_run(Context& ctx, const InstallOptions& o, const release::Resolved& r,
                       const std::string& name, InstallResult& out) {
  const auto& sel = r.selection;
  const size_t before = ctx.notes().actions().size();
  TRY(adopt_before_install(ctx, nullptr, out.adoption, out)); // says what it would adopt
  const bool adopting = ctx.notes().actions().size() != before;
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  out.active = gen_info(ctx, view, view.current);
  bool present = view.entry(name) != nullptr;
  // Active in any slot: nothing to do.
  out.changed = !active_generation_of(view, name);
  if (out.changed) {
    if (!present) {
      const std::string file = fs::path(sel.package.relative_path).filename().string();
      const bool cached = util::exists_nofollow(
          fetch::cached_archive(ctx.layout().cache_dir(), sel.package.sha256));
      std::vector<std::string> detail = r.archive_urls;
      detail.push_back("sha256 " + sel.package.sha256);
      TRY(dry_run_form(ctx, o, r, *out.archive));
      if (out.archive->form != "repack") { // a repack's step is dry_run_form's
        if (o.archive) {
          ctx.action("would verify " + *o.archive +
                         " against the manifest: " + bytes_text(sel.package.size),
                     std::move(detail));
        } else if (cached) {
          ctx.action("would read " + file + " from the cache " + ctx.layout().cache_dir().string() +
                         ": " + bytes_text(sel.package.size),
                     std::move(detail));
        } else {
          detail.push_back("NVIDIA's archive: " + out.archive->form_reason);
          ctx.action("would download " + file + " from " + url_host(r.archive_urls.front()) + ": " +
                         bytes_text(sel.package.size) + ", kept in the cache " +
                         ctx.layout().cache_dir().string(),
                     std::move(detail));
        }
      }
      plan_space(ctx, ctx.layout().store_dir(), sel.package.size * 2);
      ctx.action(
          "would install cuDNN " + sel.version + " (CUDA " + std::to_string(sel.cuda_major) + ", " +
              sel.platform + ") as store entry " + ctx.layout().entry_dir(name).string(),
          {"components: " + util::join(out.components.value_or(std::vector<std::string>{}), ", "),
           "checked before it is published: cudnn_version.h, the library set, symlink "
           "chains, SONAMEs, ELF machine"});
    }
    TRY_ASSIGN(int n, store::next_generation_number(ctx.layout(), view.generations));
    TRY(plan_switch(ctx, name, n + (adopting ? 1 : 0), o.demands()));
  }
  out.install_said =
      out.changed ? InstallResult::Said::would_install : InstallResult::Said::would_not_change;
  return {};
}

} // namespace

namespace {

Status install_steps(Context& ctx, const InstallOptions& given, InstallResult& out) {
  InstallOptions o = given;
  std::optional<ArchiveName> named;
  if (o.archive) {
    named = parse_archive_name(*o.archive);
  }
  if (o.sidecar && !(o.archive && is_repack_file(*o.archive))) {
    return fail(ErrorCode::usage, "--sidecar names the sidecar of a repack: it goes with "
                                  "--archive FILE.tar.zst");
  }
  if (o.version.empty()) {
    if (!named) {
      return fail(ErrorCode::usage,
                  o.archive ? "VERSION is required: the name of " + *o.archive +
                                  " does not carry it (NVIDIA's archives are named "
                                  "cudnn-<platform>-<version>_cuda<M>-archive.tar.xz)"
                            : "VERSION is required (a release label like 9.2.0, a full version, "
                              "latest or 9; or --archive FILE with NVIDIA's file name)");
    }
    o.version = named->version;
  }
  const bool partial = release::is_partial_version(o.version);
  if (!partial) {
    TRY(release::parse_version_arg(o.version));
  }
  std::vector<std::string> components =
      o.components.empty() ? store::default_components() : o.components;
  TRY_ASSIGN(release::Target target, release::resolve_target(ctx.layout(), ctx.config(),
                                                             ctx.opts().platform, ctx.opts().cuda));
  target.force = ctx.opts().force;
  if (named) {
    // The archive is what its name says, unless --cuda/--platform (or the config) say more.
    if (!ctx.opts().platform && !ctx.config().platform) {
      target.platform = named->platform;
    }
    if (!ctx.opts().cuda && !ctx.config().cuda) {
      target.cuda = named->cuda;
      target.cuda_source = "the name of " + *o.archive;
    }
  }
  if (!target.cuda) {
    // No --cuda, config or toolkit: the active build's major is kept where the release has it.
    std::vector<std::string> ignored;
    if (auto view = store::read_store(ctx.layout(), ignored)) {
      if (const auto* e = view->active_entry(); e && e->cuda_major > 0) {
        target.active_cuda = e->cuda_major;
        target.active_label = e->label.empty() ? e->version : e->label;
      }
    }
  }
  // What was asked for, and (below) the full version the command ends with: the Ansible
  // module reports them, also under --dry-run.
  out.requested = o.version;
  if (partial) {
    // "latest", "9", "9.2": the newest release the mirrors offer for this CUDA and platform.
    TRY_ASSIGN(o.version, resolve_partial(ctx, o.version, target.platform, target.cuda));
  }
  // Signed recall lists: read before anything is fetched or written (a list refused under
  // require_signed_recalls stops the install here).
  TRY_ASSIGN(recall::RecallSet recalls, load_site_recalls(ctx));
  TRY(recover_pending(ctx)); // the store view below must not include a crashed install's entry
  if (auto done = install_stored(ctx, o, target, components, recalls, out)) {
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
    ctx.warn("no CUDA toolkit found under " + ctx.layout().host(ctx.config().cuda_home).string() +
             "; choosing the newest CUDA variant the release offers (pass --cuda to choose)");
  } else if (target.cuda) { // else the active build's major, if the release has it (resolve)
    ctx.info("CUDA major " + std::to_string(*target.cuda) + " from " + target.cuda_source, 1);
  }
  auto resolved = release::resolve_release(sources(ctx), ctx.notes(), o.version, target);
  if (!resolved && o.archive && !ctx.opts().manifest &&
      category(resolved.error().code) == ErrorCode::network) {
    // Offline (or no mirror has it): NVIDIA's published manifest data shipped with cudnnctl.
    ctx.info("no mirror can vouch for " + *o.archive + " (" + resolved.error().full_message() +
             "); checking it against NVIDIA's manifest shipped with cudnnctl");
    resolved = resolve_offline(*o.archive, o.version, target, resolved.error());
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
  {
    // Into which slot: a refusal (a plain install into a slot active alongside) comes before
    // the lock and the download.
    TRY_ASSIGN(store::StoreView pre, read_store(ctx));
    if (!active_generation_of(pre, name)) {
      TRY(switch_slot(ctx, pre, sel.version, sel.cuda_major, o.alongside, false));
    }
  }
  if (ctx.dry_run()) {
    return install_dry_run(ctx, o, r, name, out);
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
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
  return install_new(ctx, held, o, r, components, name, out, late);
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
