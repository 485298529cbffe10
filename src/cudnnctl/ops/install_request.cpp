// SPDX-License-Identifier: Apache-2.0
// `install`'s request, parsed once at the edge (ops/install_request.hpp).
#include "ops/install_request.hpp"

#include "archive/naming.hpp"
#include "release/pass.hpp"
#include "store/view.hpp"
#include "util/strings.hpp"

#include <algorithm>

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

// The request parsed once, before anything is read from a mirror: VERSION (or the name of
// --archive's file), the components, and the target host (platform and CUDA major).
Result<InstallRequest> parse_request(Context& ctx, const InstallOptions& given) {
  InstallRequest req{given, {}, {}, {}};
  InstallOptions& o = req.o;
  std::optional<ArchiveName> named;
  if (o.archive) {
    named = parse_archive_name(*o.archive);
  }
  if (o.sidecar && !(o.archive && release::is_repack_file(*o.archive))) {
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
  req.version = manifest::VersionArg::of(o.version);
  if (!release::is_partial_version(req.version)) {
    TRY(release::parse_version_arg(req.version));
  }
  req.components = o.components.empty() ? store::default_components() : o.components;
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
  req.target = std::move(target);
  return req;
}

} // namespace cudnnctl::ops
