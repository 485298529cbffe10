// SPDX-License-Identifier: Apache-2.0
#include "release/pass.hpp"

#include "fetch/fetch.hpp"
#include "manifest/pins.hpp"
#include "release/stream.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "util/thread_cpu.hpp"

#include <algorithm>
#include <map>
#include <sys/statvfs.h>
#include <unistd.h>

namespace cudnnctl::release {

namespace fs = std::filesystem;

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

bool is_repack_file(const std::string& path) {
  return path.ends_with(".tar.zst");
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

void PassClock::operator()(const char* what) const {
  if (!m_t0) {
    return;
  }
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - *m_t0;
  m_notes.info("timing: " + std::string(what) + " at " + std::to_string(dt.count()) + " s", 2);
}

namespace {

// -vv: which of the pass's threads was busy and which side of the byte pipe waited.
void say_pass_threads(const util::Notes& notes, const StreamExtractor& extractor,
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
  notes.info(line + waits, 2);
}

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

Form original_form(const Resolved& r) {
  const auto& pkg = r.selection.package;
  return Form{false,          fs::path(pkg.relative_path).filename().string(),
              pkg.sha256,     pkg.size,
              r.archive_urls, {}};
}

// Where the sidecar of the local repack `archive` may be: --sidecar, else <sha256>.json
// beside it, else cudnnctl-repack/<sha256>.json in its directory or one of the two above it
// (a copy of the mirror's tree: cudnn/<platform>/ under the mirror's root).
std::vector<fs::path> sidecar_candidates(const std::string& archive,
                                         const std::optional<std::string>& sidecar,
                                         const std::string& original_sha) {
  if (sidecar) {
    return {fs::path(*sidecar)};
  }
  const fs::path dir = fs::absolute(archive).parent_path();
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

// What the repack's bytes were checked against, for the "verified" line.
std::string repack_checked(const Form& form) {
  return form.chunks.empty() ? " (size and sha256 match its pinned sidecar)"
                             : " (size and the sha256 of every 1 MiB match its pinned sidecar)";
}

// One pass over the bytes of `form`: downloaded (or read from the cache or --archive), hashed,
// and extracted into the staging directory at the same time. What was extracted is trusted
// only once size and sha256 matched.
Result<PassResult> stream_archive(const PassRequest& req, util::Notes& notes, PassClock& clock,
                                  const Form& form, const PassHooks& hooks = {}) {
  const auto& pkg = req.resolved.selection.package;
  const std::string suffix = form.repack ? ".tar.zst" : ".tar.xz";
  const std::string& file_name = form.file_name;
  const bool cached =
      !req.archive &&
      util::exists_nofollow(fetch::cached_archive(req.cache_dir, form.sha256, suffix));
  util::Progress progress(req.progress, {req.archive ? "read"
                                         : cached    ? "cache"
                                                     : "download",
                                         "extract"});
  StreamExtractOptions so;
  // The same top folder, caps and entry limit for the repack as for the original
  // (release/sidecar.hpp).
  set_install_limits(so.extract, pkg);
  so.extract.include = [&](std::string_view path, archive::EntryKind) {
    return wanted_path(req.components, path);
  };
  so.extract.writing = archive::FileWriting::background; // decompression alone on its thread
  // Each file reaches the disk while the next ones are decompressed: the fsync of the staged
  // tree before it is published (Staging::seal, which still syncs every file) then waits for
  // the last file alone, not for a flush of all of it (0.2 s of a 100 MiB/s install,
  // docs/BENCHMARKS.md).
  so.extract.sync_files = util::Fsync::yes;
  so.extract.format =
      form.repack ? archive::ArchiveFormat::tar_zstd : archive::ArchiveFormat::tar_xz;
  so.extract.hash_chunk = form.chunks.empty() ? 0 : util::k_sha256_chunk;
  so.extract.vet = hooks.vet;
  so.extract.file_done = hooks.file_done;
  so.extract.link_done = hooks.link_done;
  so.expected_size = form.size;
  so.progress = [&](uint64_t consumed) { progress.update(1, consumed, form.size); };
  StreamExtractor extractor(req.staging, std::move(so));
  clock.start();
  (void)util::take_thread_cpu(); // an earlier pass's
  const double main_cpu0 = util::thread_cpu_seconds();
  auto on_bytes = [&](uint64_t done, uint64_t total) { progress.update(0, done, total); };
  fetch::StreamSink sink = extractor.sink();
  sink.restart = [&]() -> Status {
    notes.info("the download started again from byte 0 (resume refused, retry or next mirror): "
               "extracting again");
    TRY(extractor.sink().restart()); // the stopped pass's threads have ended
    if (hooks.restarted) {
      hooks.restarted();
    }
    return {};
  };
  // Download (or read), hash and extract in one pass. Until the digest matched, the bytes
  // and what the extractor made of them are untrusted; a refused entry is final only then.
  PassResult out;
  if (req.archive) {
    notes.info("verifying and extracting " + *req.archive + " (" + util::human_bytes(form.size) +
               ")");
    TRY(stream_file(*req.archive, form.size, form.sha256, sink, on_bytes, form.chunks));
    notes.action("verified " + *req.archive +
                 (form.repack ? repack_checked(form) : " (size and sha256 match the manifest)"));
    out.url = "file://" + fs::absolute(*req.archive).string();
  } else {
    notes.info((cached ? "extracting " + file_name + " from the cache"
                       : "downloading and extracting " + file_name) +
               " (" + util::human_bytes(form.size) + ")");
    fetch::ArchiveRequest fr{form.urls, form.sha256, form.size, suffix, form.chunks};
    fr.durable = false; // a cache entry: re-verified before every use (fetch.hpp)
    fetch::Options fo = fetch_options(req.sources);
    fo.progress = on_bytes;
    TRY(fetch::fetch_archive(fr, req.cache_dir, fo, &sink));
    notes.action("downloaded and verified " + file_name +
                 (form.repack ? repack_checked(form) : ""));
    out.url = form.urls.front();
  }
  progress.complete(0);
  clock("archive verified");
  TRY(util::hook("after-download"));
  TRY_ASSIGN(out.entries, extractor.finish());
  clock("extraction done");
  say_pass_threads(notes, extractor, main_cpu0);
  progress.update(1, form.size, form.size);
  progress.complete(1);
  progress.finish(true);
  TRY(util::hook("after-extract"));
  return out;
}

// The repack's pass: streamed (size and sha256 of the pinned sidecar), then every extracted
// file checked against the sidecar.
Result<PassResult> stream_repack(const PassRequest& req, util::Notes& notes, PassClock& clock,
                                 const RepackSource& src, const std::string& why) {
  Form form{true,
            fs::path(src.sidecar.repack_path).filename().string(),
            src.sidecar.repack_sha256,
            src.sidecar.repack_size,
            src.urls,
            {}};
  if (lists_chunks(src.sidecar)) {
    form.chunks = src.sidecar.repack_chunks; // hashed on several threads
  } else {
    notes.info("the sidecar lists no chunk digests (an older mirror): the repack and its files "
               "are checked by their whole sha256");
  }
  // Nothing the sidecar does not list reaches the disk.
  const SidecarIndex index(src.sidecar);
  PassHooks hooks = req.repack_hooks ? req.repack_hooks(index) : PassHooks{};
  hooks.vet = [&](const archive::Entry& e) { return index.vet(e); };
  TRY_ASSIGN(PassResult s, stream_archive(req, notes, clock, form, hooks));
  if (hooks.finished) {
    hooks.finished();
  }
  TRY(check_extracted(src.sidecar, s.entries, [&](std::string_view path, archive::EntryKind) {
    return wanted_path(req.components, path);
  }));
  s.form.form = "repack";
  s.form.reason = why + " and every extracted file matches it";
  s.form.repack =
      RepackRef{form.urls.front(), form.sha256, form.size, src.sidecar_url, src.sidecar_sha256};
  if (req.chose) {
    req.chose(s.form);
  }
  notes.action("checked every extracted file against the repack's sidecar");
  // The entry records NVIDIA's archive (URL, sha256, size): what its files are.
  s.url = req.resolved.archive_urls.front();
  return s;
}

} // namespace

RepackLookup lookup_repack(const Sources& sources, const Resolved& r) {
  auto pins = manifest::load_pins(sources.pins_dir);
  if (!pins) {
    return RepackLookup{std::nullopt, pins.error().message, true};
  }
  return find_repack(sources, r, *pins);
}

Result<RepackSource> local_repack(const Sources& sources, const std::string& archive,
                                  const std::optional<std::string>& sidecar, const Resolved& r) {
  const auto& pkg = r.selection.package;
  TRY_ASSIGN(manifest::PinSet pins, manifest::load_pins(sources.pins_dir));
  const manifest::Pin* pin = pins.find_repack(pkg.sha256);
  if (pin == nullptr) {
    return fail(ErrorCode::integrity,
                archive + " is a repack of " + pkg.relative_path +
                    ", but no site pin names a repack of that archive; install NVIDIA's .tar.xz, "
                    "or trust the site mirror's cudnnctl-pins.sha256 (copy it into " +
                    sources.pins_dir.string() + ")");
  }
  std::optional<fs::path> found;
  std::string looked;
  for (const auto& c : sidecar_candidates(archive, sidecar, pkg.sha256)) {
    looked += (looked.empty() ? "" : ", ") + c.string();
    if (util::exists_nofollow(c)) {
      found = c;
      break;
    }
  }
  if (!found) {
    return fail(ErrorCode::usage, "no sidecar for the repack " + archive + " (looked for " +
                                      looked + "); name it with --sidecar FILE");
  }
  TRY_ASSIGN(std::string bytes, util::read_file(*found, k_max_sidecar));
  const std::string sha = util::sha256_hex(bytes);
  if (sha != pin->sha256) {
    return fail(ErrorCode::integrity, "repack sidecar " + found->string() + " has sha256 " + sha +
                                          ", but the site pin (" + pin->source + ") says " +
                                          pin->sha256 +
                                          "; it does not describe a repack "
                                          "this host trusts");
  }
  TRY_ASSIGN(Sidecar parsed, parse_sidecar(bytes, found->string()));
  TRY(check_sidecar_names(parsed, pkg, found->string()));
  RepackSource src;
  src.sidecar_url = "file://" + fs::absolute(*found).string();
  src.sidecar_sha256 = pin->sha256;
  src.urls = {"file://" + fs::absolute(archive).string()};
  src.sidecar = std::move(parsed);
  return src;
}

Result<PassResult> run_pass(const PassRequest& req, util::Notes& notes, PassClock& clock) {
  const Resolved& r = req.resolved;
  std::string reason = "--archive names the file to install";
  if (req.archive && is_repack_file(*req.archive)) {
    TRY_ASSIGN(RepackSource src, local_repack(req.sources, *req.archive, req.sidecar, r));
    auto s = stream_repack(req, notes, clock, src,
                           "--archive names a repack whose sidecar " + src.sidecar_url +
                               " the site pins");
    if (!s) {
      Error e = s.error();
      e.add_context("installing the repack " + *req.archive);
      return fail(std::move(e));
    }
    return s;
  }
  bool warn = false;
  if (!req.archive) {
    RepackLookup look = lookup_repack(req.sources, r);
    reason = look.reason;
    warn = look.warn;
    if (const auto& src = look.source) {
      auto s =
          stream_repack(req, notes, clock, *src, "the site pins its sidecar " + src->sidecar_url);
      if (s) {
        return s;
      }
      if (req.repack_refused) {
        req.repack_refused();
      }
      Error e = s.error();
      if (e.code == ErrorCode::environment || e.code == ErrorCode::internal) {
        return fail(std::move(e));
      }
      reason = "the repack was refused: " + e.full_message();
      warn = true;
      // The original starts from an empty staging directory: nothing of the repack stays.
      TRY(util::remove_tree(req.staging));
      TRY(util::make_dirs(req.staging));
    }
    if (warn) {
      notes.warn("installing NVIDIA's original archive instead of the mirror's repack: " + reason);
    } else {
      notes.info("installing NVIDIA's original archive (" + reason + ")", 1);
    }
  }
  FormChoice chosen{"xz", reason, std::nullopt};
  if (req.chose) {
    req.chose(chosen);
  }
  TRY_ASSIGN(PassResult s, stream_archive(req, notes, clock, original_form(r)));
  s.form = std::move(chosen);
  return s;
}

store::EntryInfo entry_info(const std::string& name, const manifest::Selection& sel,
                            const std::vector<std::string>& components, const PassResult& pass) {
  store::EntryInfo info = store::new_entry_info(name, sel.version, sel.label, sel.cuda_major,
                                                sel.platform, components, "installed");
  info.archive = store::ArchiveInfo{pass.url, sel.package.sha256, sel.package.size};
  std::map<std::string, const archive::Entry*> by_path;
  for (const auto& e : pass.entries) {
    by_path[e.path] = &e;
  }
  for (const auto& e : pass.entries) {
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

} // namespace cudnnctl::release
