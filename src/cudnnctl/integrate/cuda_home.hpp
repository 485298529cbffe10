// SPDX-License-Identifier: Apache-2.0
// CUDA-home links: at every switch, include/cudnn*.h and lib64/libcudnn* in the CUDA home
// (default /usr/local/cuda) become symlinks naming the ACTIVE STORE ENTRY's files
// (<prefix>/store/<entry>/lib/libcudnn.so.9, never `current`), so `ls -al
// /usr/local/cuda/lib64/libcudnn*` shows what is really active and every path users and build
// systems know keeps working. Link targets are relative, computed from the REAL directory the
// link lives in (lib64 -> targets/x86_64-linux/lib, /usr/local/cuda -> /etc/alternatives/cuda
// -> cuda-13.0, all resolved inside the root), so they resolve on the host under --root and on
// the managed system alike.
//
// What cudnnctl touches here: only symlinks that point into <prefix>/store/, and originals it
// adopted (their bytes are in a store entry and a backup). Anything else with a cuDNN name in
// a directory (hand-made files, dpkg-owned files, update-alternatives links) makes that
// directory "foreign": cudnnctl then puts no link there (and removes its own), so no directory
// ever mixes two cuDNN builds.
#pragma once

#include "core/result.hpp"
#include "store/entry.hpp"
#include "store/layout.hpp"
#include "util/stamp.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::integrate {

namespace fs = std::filesystem;

// --- Interface ---

// "cudnn*.h" (headers cudnnctl manages in <home>/include).
bool is_cudnn_header(std::string_view name);
// "libcudnn*" (shared and static libraries and their links).
bool is_cudnn_library(std::string_view name);

// The CUDA home's directories, as system paths (inside the root) with every symlink resolved.
struct HomeDirs {
  fs::path home;                      // as configured, e.g. /usr/local/cuda
  fs::path real_home;                 // e.g. /usr/local/cuda-13.0; empty when the home is missing
  fs::path include_dir;               // real <home>/include; empty when missing
  fs::path lib_dir;                   // real <home>/lib64, else <home>/lib, else targets/*/lib
  std::vector<fs::path> include_dirs; // include, targets/*/include (existing, distinct)
  std::vector<fs::path> lib_dirs;     // lib64, lib, targets/*/lib (existing, distinct)
};

// Resolves `home` inside the root. A missing home gives empty paths (not an error).
[[nodiscard]] HomeDirs locate_home(const store::Layout& layout, const fs::path& home);

// Something with a cuDNN name in a CUDA-home directory.
struct Found {
  enum class Kind { file, symlink, other };
  enum class Class {
    managed,   // a symlink into <prefix>/store/ (cudnnctl made it), or to a sibling that is
    takeover,  // an original whose exact bytes an adopted store entry holds
    foreign,   // owned by dpkg or update-alternatives (`why` says which)
    unmanaged, // anything else: hand-made files, links elsewhere
  };
  fs::path path; // system path: real directory + name
  Kind kind = Kind::file;
  uint32_t mode = 0;
  uint64_t size = 0;
  std::string target; // symlink text
  Class cls = Class::unmanaged;
  std::string why; // foreign: "dpkg package X" / "update-alternatives group Y"
};

// Which cuDNN names scan_dir lists.
enum class Names { headers, libraries };

// Lists cuDNN names (headers or libraries) in the system directory `sys_dir`, classified as
// managed or unmanaged (callers refine unmanaged into takeover/foreign). Missing dir: empty.
[[nodiscard]] std::vector<Found> scan_dir(const store::Layout& layout, const fs::path& sys_dir,
                                          Names names);

// Removes temporaries a crash left in the system directory `sys_dir` (".cudnn*.tmp.*" and
// ".libcudnn*.tmp.*", which only cudnnctl creates); returns their system paths.
[[nodiscard]] Result<std::vector<fs::path>> sweep_tmp(const store::Layout& layout,
                                                      const fs::path& sys_dir);

// When the symlink text `target`, stored in system directory `sys_dir`, names a path under
// <prefix>/store/<entry>/: {entry, path inside the entry}.
std::optional<std::pair<std::string, std::string>>
store_ref(const store::Layout& layout, const fs::path& sys_dir, std::string_view target);

// True when the system path `sys_path` is a symlink cudnnctl owns: its text names a path
// under <prefix>/store/, or it is a plain name of a sibling link that does (ldconfig's
// rewrite of a SONAME link).
[[nodiscard]] bool is_our_link(const store::Layout& layout, const fs::path& sys_path);

// The relative symlink text from system directory `sys_dir` to store entry `entry`'s `file`.
std::string link_text(const store::Layout& layout, const fs::path& sys_dir,
                      const std::string& entry, const std::string& file);

// An original cudnnctl adopted and may replace by a link: its bytes are in store entry
// `entry` (as `file`) and in the backup tarball `backup`.
struct AdoptedRecord {
  std::string path;  // system path (real directory + name)
  std::string entry; // store entry holding its bytes
  std::string file;  // path inside the entry, e.g. "lib/libcudnn.so.9"
  std::string kind;  // "file" or "symlink"
  uint32_t mode = 0;
  uint64_t size = 0;
  int64_t mtime = 0; // seconds
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string sha256;    // files
  std::string target;    // symlinks: the original link text
  std::string backup;    // system path of the adopt backup holding it
  util::FileStamp stamp; // files: stat when hashed (util/stamp.hpp); taken_ns 0 when unknown
};

// /var/lib/cudnnctl/cuda-home.json: directories cudnnctl has put links into (so a later
// switch finds its stale links even when cuda_home changed) and the adopted originals.
struct HomeState {
  std::vector<std::string> dirs;
  std::vector<AdoptedRecord> adopted;
};
[[nodiscard]] fs::path home_state_file(const store::Layout& layout);
// Missing: empty state. Corrupt: ErrorCode::environment naming the file.
[[nodiscard]] Result<HomeState> read_home_state(const store::Layout& layout);
[[nodiscard]] Status write_home_state(const store::Layout& layout, const HomeState& state);

// A link the active entry wants: in system directory `dir`, `name` -> entry's `file`.
struct Wanted {
  fs::path dir;
  std::string name;
  std::string file;
  std::string entry; // the store entry holding `file`; empty: the plan's entry
};

// The names store entry `entry` offers (its top-level include/cudnn*.h and lib/libcudnn*,
// skipping names whose store path does not resolve to an existing file), placed in
// `include_dirs` / `lib_dirs`.
[[nodiscard]] std::vector<Wanted> wanted_links(const store::Layout& layout,
                                               const store::EntryInfo& entry,
                                               const std::vector<fs::path>& include_dirs,
                                               const std::vector<fs::path>& lib_dirs);

struct LinkOp {
  enum class Kind { link, remove };
  Kind kind = Kind::link;
  fs::path path;      // system path
  std::string target; // link: the symlink text
};

struct LinkPlan {
  std::vector<LinkOp> ops;           // links first, then removals
  std::vector<std::string> warnings; // foreign directories
  std::vector<fs::path> linked_dirs; // directories that hold links after the plan
  // Directories that want links but hold cuDNN files cudnnctl must not touch (no link is made
  // there): the directory and the names found ("libcudnn.so.8 (dpkg package libcudnn8)", ...).
  std::vector<std::pair<fs::path, std::string>> blocked;
};

// Pure: what to do so that the directories in `listings` (every directory that may hold
// links) hold exactly `wanted` (for `entry`), without touching foreign or unmanaged things.
[[nodiscard]] LinkPlan
plan_links(const store::Layout& layout, const std::string& entry, const std::vector<Wanted>& wanted,
           const std::vector<std::pair<fs::path, std::vector<Found>>>& listings);

// True when the store is on tmpfs or ramfs and the host directory `host_dir` is not: links
// from there into the store would dangle after a reboot (or when the private mount namespace
// a test runs in ends), so cudnnctl neither makes them nor adopts files from there.
[[nodiscard]] bool store_is_volatile_for(const store::Layout& layout, const fs::path& host_dir);

// Carries out `plan` (atomic link replacement, then removals, then one fsync per directory).
[[nodiscard]] Status apply_links(const store::Layout& layout, const LinkPlan& plan);

} // namespace cudnnctl::integrate
