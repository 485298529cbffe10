// SPDX-License-Identifier: Apache-2.0
// `install --dry-run` of a build that is not in the store yet (ops/install_request.hpp).
#include "fetch/fetch.hpp"
#include "ops/install_request.hpp"
#include "ops/plan.hpp"
#include "release/pass.hpp"
#include "store/view.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace cudnnctl::ops {

namespace {

// --dry-run: which form of the archive the install would stream, and why (the same choice as
// release::run_pass, up to the checks that need the bytes); a local repack that would be refused is
// refused here too. A repack is a step of the plan here; NVIDIA's archive is the plan's
// download step (below), with the reason in its detail.
Status dry_run_form(Context& ctx, const InstallOptions& o, const release::Resolved& r,
                    ArchiveRef& ref) {
  if (o.archive && release::is_repack_file(*o.archive)) {
    TRY_ASSIGN(release::RepackSource src,
               release::local_repack(sources(ctx), *o.archive, o.sidecar, r));
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
  release::RepackLookup look = release::lookup_repack(sources(ctx), r);
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

} // namespace

// --dry-run of an install that needs the archive: what would happen, in order, nothing
// written (ops/plan.hpp).
Status install_dry_run(Context& ctx, const InstallJob& job, InstallResult& out) {
  const auto& o = job.req.o;
  const auto& r = job.r;
  const auto& name = job.name;
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
      TRY(plan_space(ctx, ctx.layout().store_dir(), sel.package.size * 2));
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

} // namespace cudnnctl::ops
