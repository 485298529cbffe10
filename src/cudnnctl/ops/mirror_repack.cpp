// SPDX-License-Identifier: Apache-2.0
#include "ops/mirror_repack.hpp"

#include "release/repack.hpp"
#include "release/sidecar.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "verify/verify.hpp"

#include <chrono>
#include <map>

namespace cudnnctl::ops {

namespace {

// The repack already in DIR, when its sidecar names this archive and its bytes match the
// sidecar; nullopt otherwise (it is written again).
std::optional<MirrorRepack> present_repack(Context& ctx, const fs::path& to,
                                           const manifest::Package& pkg, const MirrorRepack& want) {
  const fs::path sidecar_path = to / want.sidecar;
  if (!util::exists_nofollow(sidecar_path)) {
    return std::nullopt;
  }
  auto text = mirror_files::read_served(sidecar_path, release::k_max_sidecar);
  if (!text) {
    return std::nullopt;
  }
  auto s = release::parse_sidecar(*text, sidecar_path.string());
  Status ok = s ? release::check_sidecar_names(*s, pkg, sidecar_path.string()) : fail(s.error());
  if (ok && s->repack_path != want.relative_path) {
    ok = fail(ErrorCode::integrity, "it names " + s->repack_path);
  }
  if (ok) {
    ok = verify::verify_file(to / s->repack_path, s->repack_size, s->repack_sha256);
  }
  if (!ok) {
    ctx.warn("repack of " + pkg.relative_path + " in " + to.string() + " is not usable (" +
             ok.error().message + "); it is written again");
    return std::nullopt;
  }
  MirrorRepack r = want;
  r.sha256 = s->repack_sha256;
  r.size = s->repack_size;
  r.sidecar_sha256 = util::sha256_hex(*text);
  r.state = "present";
  return r;
}

// What a `mirror --repack` killed mid-way left in the work directory (the lock on DIR is
// held: no live writer owns them): extraction trees. Its temporary repack was in
// DIR/.cudnnctl/tmp, which `mirror` sweeps itself.
Status sweep_leftovers(const fs::path& to) {
  for (const auto& name : util::dir_names(to / k_mirror_work_dir)) {
    if (name.starts_with("repack.tmp.")) {
      TRY(util::remove_tree(to / k_mirror_work_dir / name));
    }
  }
  return {};
}

} // namespace

Status place_repack(Context& ctx, const fs::path& to, const fs::path& tmp_dir, MirrorArchive& a,
                    MirrorResult& out) {
  const auto& pkg = a.selection.package;
  MirrorRepack want;
  TRY_ASSIGN(want.relative_path, release::repack_relative_path(pkg.relative_path));
  want.sidecar = manifest::repack_sidecar_name(pkg.sha256);
  if (auto have = present_repack(ctx, to, pkg, want)) {
    a.repack = std::move(*have);
    return {};
  }
  if (ctx.dry_run()) {
    want.state = "would write";
    ++out.repacked;
    ctx.action("would repack " + pkg.relative_path + " as " + (to / want.relative_path).string());
    a.repack = std::move(want);
    return {};
  }
  ctx.info("repacking " + pkg.relative_path + " as zstd (level " +
           std::to_string(release::k_repack_zstd_level) + ")");
  TRY(sweep_leftovers(to));
  TRY(mirror_files::trusted_dirs((to / want.relative_path).parent_path()));
  TRY(mirror_files::trusted_dirs((to / want.sidecar).parent_path()));
  const auto t0 = std::chrono::steady_clock::now();
  auto s = release::write_repack(to / pkg.relative_path, pkg, want.relative_path,
                                 to / k_mirror_work_dir, tmp_dir, to / want.relative_path);
  if (!s) {
    Error e = s.error();
    e.add_context("repacking " + pkg.relative_path);
    return fail(e);
  }
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  ctx.info("timing: repack of " + pkg.relative_path + " took " + std::to_string(dt.count()) + " s",
           2);
  // The sidecar after the repack it describes: a server never offers a sidecar whose repack
  // is not there yet.
  const std::string text = release::render_sidecar(*s);
  TRY(mirror_files::write_if_different(to / want.sidecar, tmp_dir, text));
  want.sha256 = s->repack_sha256;
  want.size = s->repack_size;
  want.sidecar_sha256 = util::sha256_hex(text);
  want.state = "written";
  ++out.repacked;
  ctx.action("repacked " + pkg.relative_path + " as " + (to / want.relative_path).string() + " (" +
             util::human_bytes(want.size) + ") with sidecar " + (to / want.sidecar).string());
  a.repack = std::move(want);
  return {};
}

std::string repack_pin_lines(const manifest::PinSet& old, const std::vector<MirrorRelease>& done) {
  std::map<std::string, std::string> rows; // sidecar name -> sidecar sha256
  for (const auto& original : old.repack_originals()) {
    rows[manifest::repack_sidecar_name(original)] = old.find_repack(original)->sha256;
  }
  for (const auto& r : done) {
    for (const auto& a : r.archives) {
      if (a.repack && !a.repack->sidecar_sha256.empty()) {
        rows[a.repack->sidecar] = a.repack->sidecar_sha256;
      }
    }
  }
  std::string text;
  for (const auto& [name, sha] : rows) {
    text += sha + "  " + name + "\n";
  }
  return text;
}

} // namespace cudnnctl::ops
