// SPDX-License-Identifier: Apache-2.0
// What `adopt` would take over in a CUDA home, and how the CUDA-home step tells cudnnctl's
// links and adopted originals from everything else. Reads only.
#pragma once

#include "host/dpkg_owned.hpp"
#include "integrate/cuda_home.hpp"
#include "ops/context.hpp"
#include "store/view.hpp"
#include "util/stamp.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct Candidate {
  integrate::Found found;   // path: real system path of the original
  std::string entry_path;   // "include/<name>" or "lib/<name>"
  std::string sha256;       // files
  std::string entry_target; // symlinks: link text in the store entry
  int64_t mtime = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  util::FileStamp stamp;  // taken just before the file was hashed
  bool duplicate = false; // same name and bytes as an earlier candidate in another directory
};

// Copies what the scan found of an original (kind, mode, size, mtime, owner, sha256, link
// target, stamp) into a record that keeps them: the home state's adopted-file record and the
// backup's file entry.
template <typename Record> void put_original_facts(const Candidate& c, Record& r) {
  r.kind = c.found.kind == integrate::Found::Kind::symlink ? "symlink" : "file";
  r.mode = c.found.mode;
  r.size = c.found.size;
  r.mtime = c.mtime;
  r.uid = c.uid;
  r.gid = c.gid;
  r.sha256 = c.sha256;
  r.target = c.found.target;
  r.stamp = c.stamp;
}

struct AdoptPlan {
  fs::path home; // as asked for
  integrate::HomeDirs dirs;
  std::vector<Candidate> files;        // empty: nothing to adopt
  std::vector<std::string> defects;    // warnings: imported as they are
  std::vector<std::string> left_alone; // warnings: not adopted
  std::string version;                 // "9.1.0"
  std::string version_source;          // "include/cudnn_version.h", "library file names"
  int cuda = 0;
  std::string platform;
  std::vector<std::string> components;
  std::string entry; // <version>-cuda<M>-<platform>-adopted-<hash8>
};

// Scans the CUDA home `home` (a path inside the root). Errors: the version cannot be told
// (ErrorCode::usage), two different files would become one store path (ErrorCode::usage).
[[nodiscard]] Result<AdoptPlan> plan_adopt(Context& ctx, const store::StoreView& view,
                                           const fs::path& home);

// cuDNN files in the CUDA home that cudnnctl does not manage and `adopt` could take over
// (hand-made: not cudnnctl's links, not adopted originals, not dpkg's or alternatives'), for
// `status`. Cheap: names and links only, nothing hashed. nullopt when there are none or
// manage_cuda_home is false.
struct UnmanagedHome {
  fs::path home;
  size_t files = 0;
  std::string version; // from the home's cudnn_version.h, else library names; may be empty
};
// The first of the managed CUDA homes (config homes()) that holds such files.
[[nodiscard]] std::optional<UnmanagedHome> find_unmanaged(const Context& ctx);
// The same for the CUDA home `home` (a path inside the root).
[[nodiscard]] std::optional<UnmanagedHome> find_unmanaged(const Context& ctx, const fs::path& home);

// "9.1.0" from a file name like "libcudnn.so.9.1.0" (also libcudnn_ops.so.9.1.0).
std::optional<std::string> version_from_library_name(std::string_view name);

// Pure: the defect warnings for one directory's originals (names and kinds): a regular file
// where a symlink belongs (libX.so or libX.so.N while libX.so.N.M.P exists: the classic `cp`
// without -P), a symlink whose target is not there.
std::vector<std::string> library_defects(const std::vector<integrate::Found>& found);

} // namespace cudnnctl::ops
