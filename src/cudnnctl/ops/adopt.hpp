// SPDX-License-Identifier: Apache-2.0
// Taking over what cudnnctl did not install (docs/ARCHITECTURE.md "What cudnnctl owns and
// what it leaves alone"):
// - `adopt [--cuda-home DIR]`: the cuDNN headers and libraries found in the CUDA home that
//   cudnnctl does not manage are backed up (tarball), imported byte for byte as a store entry
//   (origin "adopted") and a generation, and replaced by links into that entry (the CUDA-home
//   step of the switch does that: integrate/home_links.hpp).
// - `adopt --undo` (adopt_undo.cpp): puts the adopted originals back at their paths as they
//   were (files and links, modes, times) and deactivates cudnnctl (no `current`, no drop-in,
//   no CUDA-home links): the machine as it was before cudnnctl. The store and generations are
//   kept.
#pragma once

#include "ops/context.hpp"
#include "txn/transaction.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

struct AdoptOptions {
  std::optional<std::string> cuda_home; // path inside the root; default: config cuda_home
                                        // (several cuda_homes: all of them)
  bool undo = false;
};

// What the scan of a CUDA home found (data.cuda_home, version, ..., left_alone).
struct AdoptFound {
  std::string home;
  std::string version;
  std::string version_source;
  std::string entry;
  std::vector<std::string> files; // the originals' paths
  std::vector<std::string> defects;
  std::vector<std::string> left_alone;
};

// One adoption carried out.
struct Adopted {
  std::string version;
  std::string entry;
  std::string home;
  size_t files = 0;
  std::string backup;
  std::optional<int> generation; // the new generation (set once the switch is done)
};

struct AdoptResult : Outcome {
  std::optional<AdoptFound> found;
  std::optional<std::string> backup; // written (also when the switch then failed)
  std::optional<Adopted> adopted;
  std::vector<std::string> restored; // --undo: the originals put back
  size_t originals = 0;              // --undo --dry-run: how many would be
  bool repaired = false;             // nothing to adopt, but links were repaired
  // Several CUDA homes (config cuda_homes): what each scanned home held, and each adoption
  // (`found` and `adopted` are then the last home with something to adopt).
  std::vector<AdoptFound> homes_found;
  std::vector<Adopted> homes_adopted;
  enum class Said {
    none,
    nothing_to_adopt, // --dry-run too
    would_adopt,
    adopted,
    would_put_back,
    put_back
  } said = Said::none;
};

// `adopt` (or, with options.undo, `adopt --undo`). Nothing to adopt: no change. With several
// CUDA homes (cuda_homes) every home is scanned (or the one --cuda-home names, which must be
// one of them: ErrorCode::usage otherwise) and each home's cuDNN is adopted in its own
// transaction, into the slot of its CUDA major; a home whose CUDA major cannot be told is left
// alone with a warning.
[[nodiscard]] Status adopt(Context& ctx, const AdoptOptions& options, AdoptResult& out);

// `adopt --undo` (ops/adopt_undo.cpp). Nothing adopted: ErrorCode::usage. An original whose
// bytes are neither in its store entry nor in its backup: ErrorCode::integrity, nothing
// changed.
[[nodiscard]] Status adopt_undo(Context& ctx, AdoptResult& out);

// How many adopted originals `adopt --undo` (or `purge`) would put back (one per path; none
// adopted: 0), once each is known to be available, from its store entry or its verified
// backup. One that is not: ErrorCode::integrity (or the backup's error), nothing changed.
[[nodiscard]] Result<size_t> adopted_originals_ready(const store::Layout& layout);

// The release step of `adopt --undo` (the adopted originals back, then forgotten), which
// cli::run registers with the transaction room (txn::register_release_step).
[[nodiscard]] txn::ReleaseStep adopted_release_step();

// A cuDNN package dpkg has installed under the root (data.dpkg_cudnn_packages).
struct DpkgPackage {
  std::string name;
  std::string version;
  bool held = false;
};

// Warnings about cuDNN packages dpkg has installed (held ones especially) under the root,
// and the list of them. Read-only (status uses it too).
[[nodiscard]] std::vector<DpkgPackage> report_dpkg_cudnn(Context& ctx);

// What install found in the CUDA home before it installed.
struct PreInstall {
  std::vector<DpkgPackage> dpkg;
  std::optional<std::string> backup; // of an adoption (data.backup)
  std::optional<Adopted> adopted;    // finished (data.adopted)
};

// For `install`, with the lock held: when the CUDA home holds cuDNN files cudnnctl does not
// manage, adopts them first (and says so) so that nothing is overwritten silently; reports
// installed/held cuDNN packages of dpkg. No-op when there is nothing to adopt or
// manage_cuda_home is false; under --dry-run it says what it would adopt. An adoption that
// cannot be done (unknown version, conflicting copies) fails the install. The adoption's
// switch is recorded in `outcome` (changed, active, previous). `before_adopting`, when set,
// runs right before an adoption is carried out (install's compute-capability check still
// pending, issue 21: a refusal must come before anything changes); its error stops it.
[[nodiscard]] Status adopt_before_install(Context& ctx, const txn::Lock* lock, PreInstall& out,
                                          Outcome& outcome,
                                          const std::function<Status()>& before_adopting = {});

} // namespace cudnnctl::ops
