// SPDX-License-Identifier: Apache-2.0
#include "ops/validate_staged.hpp"

#include "manifest/version.hpp"
#include "util/fs.hpp"
#include "validate/header.hpp"

namespace cudnnctl::ops {

Status validate_staged(Context& ctx, const std::filesystem::path& tree,
                       const manifest::Selection& selection) {
  TRY_ASSIGN(manifest::Version v, manifest::Version::parse(selection.version));
  fs::path header = tree / "include" / "cudnn_version.h";
  if (util::exists_nofollow(header)) {
    TRY_ASSIGN(validate::HeaderVersion h, validate::read_version_header(header));
    if (h.str() != v.prefix(3)) {
      return fail(ErrorCode::integrity, "cudnn_version.h says " + h.str() +
                                            " but the manifest says " + selection.version);
    }
    ctx.action("cudnn_version.h agrees with the manifest (" + h.str() + ")");
  } else if (util::exists_nofollow(tree / "include")) {
    return fail(ErrorCode::integrity, "the archive has include/ but no cudnn_version.h");
  }
  fs::path lib = tree / "lib" / ("libcudnn.so." + std::to_string(v.major()));
  if (util::exists_nofollow(tree / "lib") && !util::exists_nofollow(lib)) {
    return fail(ErrorCode::integrity, "the archive has no lib/" + lib.filename().string());
  }
  return {};
}

} // namespace cudnnctl::ops
