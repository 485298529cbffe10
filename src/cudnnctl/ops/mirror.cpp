// SPDX-License-Identifier: Apache-2.0
#include "ops/mirror.hpp"

#include "archive/backup_writer.hpp"
#include "fetch/fetch.hpp"
#include "host/host.hpp"
#include "manifest/manifest.hpp"
#include "manifest/pins.hpp"
#include "manifest/version.hpp"
#include "ops/mirror_repack.hpp"
#include "ops/recalls.hpp"
#include "recall/recall.hpp"
#include "release/resolve.hpp"
#include "util/fs.hpp"
#include "util/hooks.hpp"
#include "util/lock.hpp"
#include "util/sha256.hpp"
#include "util/state_file.hpp"
#include "util/strings.hpp"
#include "util/trust.hpp"
#include "verify/verify.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

namespace cudnnctl::ops {

namespace mirror_files {

// Reads a file DIR serves, if it is a regular file (never through a symlink, never blocking
// on a FIFO: DIR may be writable by others, like /tmp).
std::optional<std::string> read_served(const fs::path& path, size_t max_size) {
  auto text = util::read_state_file(path, max_size);
  return text ? std::optional<std::string>(std::move(*text)) : std::nullopt;
}

// Writes `content` to `path` atomically unless it already holds exactly that. True if written.
// The temporary lives in `tmp_dir` (DIR/.cudnnctl/tmp), not beside `path`: a killed mirror
// must not leave a file the web server offers (issue 14, B16).
Result<bool> write_if_different(const fs::path& path, const fs::path& tmp_dir,
                                const std::string& content) {
  if (auto old = read_served(path, content.size() + 1); old && *old == content) {
    return false;
  }
  TRY_ASSIGN(util::AtomicFile file, util::AtomicFile::create_in(path, tmp_dir, 0644));
  TRY(file.write(content));
  TRY(util::hook("mirror-before-publish"));
  TRY(file.commit(util::Fsync::yes));
  return true;
}

// Every directory on the way to `dir` is root's (or ours) and writable by nobody else, and
// the missing ones are made here: nothing under DIR is reached through a name another user
// planted (issue 14, B9). DIR itself may be sticky and world-writable, like /tmp.
Status trusted_dirs(const fs::path& dir) {
  TRY(util::walk_trusted("/", dir, "the mirror directory", util::Missing::create));
  return {};
}

} // namespace mirror_files

namespace {

// The platforms to mirror: --platform (comma-separated, or "all"), else the config's, else
// this machine's. An empty result means "all".
Result<std::vector<std::string>> wanted_platforms(const Context& ctx) {
  std::string spec;
  if (ctx.opts().platform) {
    spec = *ctx.opts().platform;
  } else if (ctx.config().platform) {
    spec = *ctx.config().platform;
  } else {
    TRY_ASSIGN(spec, host::host_platform());
  }
  std::vector<std::string> out;
  for (const auto& raw : util::split(spec, ',')) {
    std::string p(util::trim(raw));
    if (p == "all") {
      return std::vector<std::string>{};
    }
    if (!host::is_supported_platform(p)) {
      return fail(ErrorCode::usage, "unsupported platform \"" + p +
                                        "\": mirror takes linux-x86_64, linux-sbsa, "
                                        "linux-aarch64, a comma-separated list of them, or all");
    }
    if (std::find(out.begin(), out.end(), p) == out.end()) {
      out.push_back(p);
    }
  }
  if (out.empty()) {
    return fail(ErrorCode::usage, "--platform is empty");
  }
  return out;
}

// The manifest must describe the release that was asked for.
// Fetches the manifest for `version_arg` and checks it against its pin.
Result<MirrorRelease> fetch_release(Context& ctx, const manifest::VersionArg& version_arg,
                                    const manifest::PinSet& pins,
                                    std::vector<std::string> platforms) {
  TRY_ASSIGN(manifest::Version wanted, release::parse_version_arg(version_arg));
  TRY_ASSIGN(fetch::Fetched got,
             release::fetch_manifest(sources(ctx), ctx.notes(), ctx.mirrors(),
                                     release::manifest_names(wanted), version_arg, pins));
  TRY_ASSIGN(manifest::Manifest m, manifest::parse_manifest(got.bytes, got.url));
  TRY(release::check_manifest_matches(m, wanted, got.url));
  MirrorRelease r;
  r.url = got.url;
  r.file = got.url.substr(got.url.rfind('/') + 1);
  r.label = m.release_label;
  r.parsed_label = m.parsed_label;
  r.version = m.products.at("cudnn").version;
  r.sha256 = util::sha256_hex(got.bytes);
  r.bytes = std::move(got.bytes);
  const auto* pin = pins.find(r.label);
  if (!pin) {
    r.pin = "none";
    ctx.warn("manifest " + r.url + " is not pinned: mirror pins what it fetched now (check " +
             r.sha256 + " against a trusted source before the fleet trusts it)");
  } else if (pin->source == manifest::k_builtin_pin_source) {
    r.pin = "built-in";
  } else if (pin->source.find(k_mirror_pins_file) != std::string::npos) {
    r.pin = "mirror directory";
  } else {
    r.pin = "site";
  }

  // The archives: every requested platform and CUDA major, validated by select_package.
  const auto& product = m.products.at("cudnn");
  if (platforms.empty()) {
    for (const auto& [platform, builds] : product.packages) {
      if (host::is_supported_platform(platform) && !builds.empty()) {
        platforms.push_back(platform);
      }
    }
    if (platforms.empty()) {
      return fail(ErrorCode::usage, "cuDNN " + r.label + " in " + r.file +
                                        " has no Linux build cudnnctl can install");
    }
  }
  std::vector<std::string> bases = {r.url.substr(0, r.url.rfind('/') + 1)};
  for (const auto& base : ctx.mirrors()) {
    if (std::find(bases.begin(), bases.end(), base) == bases.end()) {
      bases.push_back(base);
    }
  }
  for (const auto& platform : platforms) {
    std::vector<std::optional<int>> majors;
    auto offered = product.packages.find(platform);
    if (ctx.opts().cuda || offered == product.packages.end()) {
      majors.push_back(ctx.opts().cuda); // select_package names what is offered
    } else {
      for (const auto& [major, package] : offered->second) {
        majors.push_back(major);
      }
    }
    for (const auto& major : majors) {
      std::vector<std::string> warnings;
      TRY_ASSIGN(manifest::Selection sel, manifest::select_package(m, platform, major, warnings));
      for (const auto& w : warnings) {
        ctx.warn(w);
      }
      MirrorArchive a;
      for (const auto& base : bases) {
        a.urls.push_back(fetch::join_url(base, sel.package.relative_path));
      }
      a.selection = std::move(sel);
      r.archives.push_back(std::move(a));
    }
  }
  // Odd entries of the requested platforms that were not selected: said, not hidden.
  for (const auto& [platform, why] : product.invalid) {
    if (!ctx.opts().cuda &&
        std::find(platforms.begin(), platforms.end(), platform) != platforms.end()) {
      ctx.warn("not mirrored: " + r.file + " entry for " + platform + ": " + why);
    }
  }
  return r;
}

// DIR/<relative_path>, refusing anything that would leave DIR (the parser already refuses
// ".." and absolute paths; this is the second line of defence).
Result<fs::path> dest_path(const fs::path& to, const std::string& relative) {
  fs::path p = (to / relative).lexically_normal();
  auto rel = p.lexically_relative(to);
  if (rel.empty() || *rel.begin() == ".." || rel.is_absolute()) {
    return fail(ErrorCode::integrity, "archive path " + relative + " leaves " + to.string());
  }
  return p;
}

// True when `path` holds exactly the expected bytes (size, then sha256).
bool verified_copy(Context& ctx, const fs::path& path, const manifest::Package& pkg) {
  if (!util::exists_nofollow(path)) {
    return false;
  }
  auto ok = verify::verify_file(path, pkg.size, pkg.sha256);
  if (!ok) {
    ctx.warn(path.string() + " does not match the manifest (" + ok.error().message +
             "); it is downloaded again");
  }
  return ok.has_value();
}

// Removes what an interrupted mirror left: every temporary in DIR/.cudnnctl/tmp, and (from
// versions that wrote them beside their targets) ".redistrib_*.json.tmp.*" and
// ".cudnnctl-pins.sha256.tmp.*" in DIR itself. Needs the mirror lock.
void sweep_temporaries(Context& ctx, const fs::path& to, const fs::path& tmp_dir) {
  auto ours = [](const std::string& n) {
    return util::is_tmp_name(n) && (n.starts_with(".redistrib_") ||
                                    n.starts_with(std::string(".") + k_mirror_pins_file + "."));
  };
  for (const auto& n : util::dir_names(to)) {
    if (ours(n) && util::remove_file(to / n)) {
      ctx.action("removed leftover " + (to / n).string());
    }
  }
  for (const auto& n : util::dir_names(tmp_dir)) {
    (void)util::remove_file(tmp_dir / n);
  }
}

// The pins file: the labels it held, plus the releases mirrored now, in version order.
std::string pins_text(const manifest::PinSet& old, const std::vector<MirrorRelease>& done) {
  std::map<manifest::Version, std::pair<std::string, std::string>> rows; // -> sha256, label
  for (const auto& label : old.labels()) {
    const manifest::Pin* pin = old.find(label);
    rows[pin->label] = {pin->sha256, label};
  }
  for (const auto& r : done) {
    rows[r.parsed_label] = {r.sha256, r.label};
  }
  std::string text =
      "# Site pins written by `cudnnctl mirror`: the sha256 of every manifest mirrored into\n"
      "# this directory. Copy this file to /etc/cudnnctl/pins.d/ on every host that installs\n"
      "# from this mirror (with --require-pin, or require_pin = true in config.toml).\n";
  for (const auto& [version, row] : rows) {
    text += row.first + "  redistrib_" + row.second + ".json\n";
  }
  // Repack sidecars (`mirror --repack`): a host installs a repack only when its sidecar's
  // sha256 is pinned here.
  return text + repack_pin_lines(old, done);
}

// The recall lists this host can vouch for: those of recalls.d that verified.
std::vector<const recall::ListStatus*> carried_lists(const recall::RecallSet& set) {
  std::vector<const recall::ListStatus*> out;
  for (const auto& l : set.lists()) {
    if (l.state == recall::ListState::valid || l.state == recall::ListState::expired) {
      out.push_back(&l);
    }
  }
  return out;
}

std::string recalls_index_text(const std::vector<const recall::ListStatus*>& lists) {
  std::string text =
      "# Signed recall lists carried by `cudnnctl mirror` (each NAME.json has\n"
      "# NAME.json.sig beside it). Hosts with recalls_from_mirror = true read them.\n";
  for (const auto* l : lists) {
    text += fs::path(l->path).filename().string() + "\n";
  }
  return text;
}

// DIR/cudnnctl-recalls: every carried list and signature, then the index, then what is no
// longer carried removed. Under --dry-run, only what would happen. Needs the mirror lock
// (not under --dry-run).
Status place_recalls(Context& ctx, const fs::path& to, const fs::path& tmp_dir,
                     const recall::RecallSet& set, MirrorResult& out) {
  auto lists = carried_lists(set);
  const fs::path dir = to / recall::k_mirror_recalls_dir;
  if (lists.empty() && !util::exists_nofollow(dir)) {
    return {};
  }
  const bool dry = ctx.dry_run();
  if (!dry) {
    TRY(mirror_files::trusted_dirs(dir));
  }
  auto put = [&](const fs::path& path, const std::string& bytes) -> Result<bool> {
    if (dry) {
      auto old = mirror_files::read_served(path, bytes.size() + 1);
      bool differs = !(old && *old == bytes);
      if (differs) {
        ctx.action("would write " + path.string());
      }
      return differs;
    }
    TRY_ASSIGN(bool written, mirror_files::write_if_different(path, tmp_dir, bytes));
    if (written) {
      ctx.action("wrote " + path.string());
    }
    return written;
  };
  std::set<std::string> keep = {recall::k_mirror_recalls_index};
  for (const auto* l : lists) {
    const std::string name = fs::path(l->path).filename().string();
    MirrorRecallList m{l->path, (dir / name).string(), recall::state_name(l->state), false};
    // The signature first: a host never sees a new list beside the old list's signature
    // for long (and if it does, the list only counts as badly signed until the next write).
    TRY_ASSIGN(bool sig_written, put(dir / (name + ".sig"), l->signature));
    TRY_ASSIGN(bool list_written, put(dir / name, l->text));
    m.written = sig_written || list_written;
    keep.insert(name);
    keep.insert(name + ".sig");
    out.recall_lists.push_back(std::move(m));
  }
  TRY(put(dir / recall::k_mirror_recalls_index, recalls_index_text(lists)));
  out.recalls_index = (dir / recall::k_mirror_recalls_index).string();
  for (const auto& n : util::dir_names(dir)) {
    bool ours = n.ends_with(".json") || n.ends_with(".json.sig");
    if (!ours || keep.count(n)) {
      continue;
    }
    out.recalls_removed.push_back((dir / n).string());
    if (dry) {
      ctx.action("would remove " + (dir / n).string() + " (no longer in " + recall::k_recalls_dir +
                 ")");
    } else if (util::remove_file(dir / n)) {
      ctx.action("removed " + (dir / n).string() + " (no longer in " + recall::k_recalls_dir + ")");
    }
  }
  return {};
}

} // namespace

namespace {

// --dry-run: what would be downloaded and written.
Status plan_only(Context& ctx, const fs::path& to, const fs::path& pins_file,
                 const manifest::PinSet& dir_pins, bool repack, const recall::RecallSet& recalls,
                 MirrorResult& out) {
  for (auto& r : out.releases) {
    for (auto& a : r.archives) {
      TRY_ASSIGN(fs::path dest, dest_path(to, a.selection.package.relative_path));
      TRY(util::walk_trusted("/", dest.parent_path(), "the mirror directory"));
      bool have = verified_copy(ctx, dest, a.selection.package);
      a.state = have ? "present" : "would download";
      if (have) {
        ++out.present;
      } else {
        ++out.downloaded;
        out.downloaded_bytes += a.selection.package.size;
        ctx.action("would download " + a.urls.front() + " to " + dest.string());
      }
      if (repack) {
        TRY(place_repack(ctx, to, {}, a, out));
      }
    }
    auto old = mirror_files::read_served(to / r.file, r.bytes.size() + 1);
    r.written = !(old && *old == r.bytes);
    if (r.written) {
      ctx.action("would write " + (to / r.file).string());
    }
  }
  auto old = mirror_files::read_served(pins_file, 1 << 20);
  if (!out.releases.empty() && !(old && *old == pins_text(dir_pins, out.releases))) {
    ctx.action("would write " + pins_file.string());
  }
  return place_recalls(ctx, to, fs::path(), recalls, out);
}

// Places one archive in DIR: kept when a verified copy is there, else downloaded into the work
// directory, verified (size, then sha256), and renamed into place: DIR never holds a partial
// or unverified archive under its real name.
Status place_archive(Context& ctx, const fs::path& to, const fs::path& partial_dir,
                     MirrorArchive& a, MirrorResult& out) {
  const auto& pkg = a.selection.package;
  TRY_ASSIGN(fs::path dest, dest_path(to, pkg.relative_path));
  TRY(mirror_files::trusted_dirs(dest.parent_path()));
  if (verified_copy(ctx, dest, pkg)) {
    a.state = "present";
    ++out.present;
    return {};
  }
  ctx.info("downloading " + dest.filename().string() + " (" + util::human_bytes(pkg.size) + ")");
  fetch::ArchiveRequest req{a.urls, pkg.sha256, pkg.size};
  auto got = fetch::fetch_archive(req, partial_dir, release::fetch_options(sources(ctx)));
  if (!got) {
    Error e = got.error();
    e.add_context("mirroring " + pkg.relative_path);
    return fail(e);
  }
  TRY(util::rename_durable(*got, dest));
  a.state = "downloaded";
  ++out.downloaded;
  out.downloaded_bytes += pkg.size;
  ctx.action("downloaded and verified " + a.urls.front() + " to " + dest.string());
  return {};
}

// Archives first, each manifest after its archives, the pins file after each manifest.
Status mirror_all(Context& ctx, const fs::path& to, const fs::path& pins_file,
                  const manifest::PinSet& dir_pins, bool repack, const recall::RecallSet& recalls,
                  MirrorResult& out) {
  const fs::path partial_dir = to / k_mirror_work_dir / "partial";
  const fs::path tmp_dir = to / k_mirror_work_dir / "tmp";
  TRY(mirror_files::trusted_dirs(partial_dir));
  TRY(mirror_files::trusted_dirs(tmp_dir));
  auto timeout = std::chrono::milliseconds(static_cast<long>(ctx.lock_timeout() * 1000));
  TRY_ASSIGN(util::LockFile lock, util::LockFile::acquire(to / k_mirror_work_dir / "lock", timeout,
                                                          "cudnnctl " + ctx.opts().argv_line));
  sweep_temporaries(ctx, to, tmp_dir);
  std::vector<MirrorRelease> done;
  for (auto& r : out.releases) {
    for (auto& a : r.archives) {
      TRY(place_archive(ctx, to, partial_dir, a, out));
      if (repack) {
        TRY(place_repack(ctx, to, tmp_dir, a, out));
      }
    }
    // The manifest last, byte for byte: it never names an archive that is not there.
    TRY_ASSIGN(r.written, mirror_files::write_if_different(to / r.file, tmp_dir, r.bytes));
    if (r.written) {
      ctx.action("wrote " + (to / r.file).string());
    }
    done.push_back(r);
    TRY_ASSIGN(bool pins_written,
               mirror_files::write_if_different(pins_file, tmp_dir, pins_text(dir_pins, done)));
    if (pins_written) {
      ctx.action("wrote " + pins_file.string());
    }
  }
  return place_recalls(ctx, to, tmp_dir, recalls, out);
}

} // namespace

Status mirror(Context& ctx, const MirrorOptions& o, MirrorResult& out) {
  if (ctx.opts().manifest) {
    return fail(ErrorCode::usage,
                "mirror fetches each redistrib_<label>.json from the mirrors; --manifest is not "
                "supported here (use --mirror URL to name where to fetch from)");
  }
  if (o.to.empty()) {
    return fail(ErrorCode::usage, "--to DIR is required");
  }
  if (o.repack && *o.repack != "zstd") {
    return fail(ErrorCode::usage,
                "unknown --repack format \"" + *o.repack + "\" (the only one is zstd)");
  }
  if (o.repack && !archive::compression_supported(archive::Compression::zstd)) {
    return fail(ErrorCode::environment,
                "--repack zstd: this libarchive cannot write zstd without an external program");
  }
  const fs::path to = fs::absolute(o.to).lexically_normal();
  const fs::path pins_file = to / k_mirror_pins_file;
  TRY_ASSIGN(std::vector<std::string> platforms, wanted_platforms(ctx)); // empty: all
  std::vector<manifest::VersionArg> versions; // o.versions parsed once, here
  for (const auto& v : o.versions) {
    versions.push_back(manifest::VersionArg::of(v));
    TRY(release::parse_version_arg(versions.back()));
  }
  TRY_ASSIGN(manifest::PinSet pins, manifest::load_pins(ctx.layout().pins_dir()));
  manifest::PinSet dir_pins;
  if (util::exists_nofollow(pins_file)) {
    auto text = util::read_state_file(pins_file, 1 << 20);
    if (!text) {
      return fail(text.error());
    }
    TRY(dir_pins.add(*text, pins_file.string()));
    // What this directory already serves is pinned like a site pin: a manifest that changed
    // upstream is refused rather than handed to a fleet that pins the old bytes.
    TRY(pins.add(*text, pins_file.string()));
  }
  // Every manifest first (network reads only): an unknown version writes nothing.
  for (const auto& v : versions) {
    TRY_ASSIGN(MirrorRelease r, fetch_release(ctx, v, pins, platforms));
    bool seen = std::any_of(out.releases.begin(), out.releases.end(),
                            [&](const MirrorRelease& x) { return x.file == r.file; });
    if (!seen) {
      out.releases.push_back(std::move(r));
    }
  }
  // The recall lists this host verifies (its own recalls.d only: a mirror passes on what its
  // operator vouches for, never what another mirror served).
  TRY_ASSIGN(recall::RecallSet recalls, recall::load_recalls(ctx.opts().root, recall_policy(ctx)));
  for (const auto& w : recalls.warnings()) {
    ctx.warn(w + " (not carried to the mirror)");
  }
  if (o.versions.empty()) {
    if (carried_lists(recalls).empty() &&
        !util::exists_nofollow(to / recall::k_mirror_recalls_dir)) {
      return fail(ErrorCode::usage,
                  "nothing to mirror: give one or more VERSIONs, or put signed recall lists in " +
                      std::string(recall::k_recalls_dir) + " to carry them");
    }
  }
  out.planned = true;
  out.to = to.string();
  out.pins_file = pins_file.string();
  if (ctx.dry_run()) {
    TRY(plan_only(ctx, to, pins_file, dir_pins, o.repack.has_value(), recalls, out));
  } else {
    TRY(mirror_all(ctx, to, pins_file, dir_pins, o.repack.has_value(), recalls, out));
  }
  out.completed = true;
  out.changed = !ctx.notes().actions().empty();
  return {};
}

} // namespace cudnnctl::ops
