// SPDX-License-Identifier: Apache-2.0
// `backup [--output FILE]` exports the active generation as a backup tarball (format:
// store/backup.hpp); `restore FILE` imports one as a new store entry and switches to it.
#pragma once

#include "gates/findings.hpp"
#include "ops/activate.hpp"
#include "ops/context.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace cudnnctl::ops {

// --- Interface ---

struct BackupOptions {
  std::optional<std::string> output; // host path, as given
};

struct BackupResult : Outcome {
  std::string file; // data.backup
  bool written = false;
  std::string entry;
  std::string version;
  int generation = 0;
  size_t files = 0;
};

// `backup [--output FILE]`: a generation backup of the active generation; default path
// /var/lib/cudnnctl/backups/<entry>-gen<N>-<time>.tar.zst.
[[nodiscard]] Status backup(Context& ctx, const BackupOptions& options, BackupResult& out);

struct RestoreOptions {
  std::string file; // host path, as given
};

struct RestoreResult : SwitchResult {
  std::string file;    // absolute
  std::string version; // of the backup
  std::string kind;    // "adopt" or "generation"
  std::optional<int> generation;
};

// `restore FILE`: store::verify_backup (exit 4 before anything changes), then import as a new
// store entry (origin "restored") and switch to it as a new generation, journaled.
[[nodiscard]] Status restore(Context& ctx, const RestoreOptions& options, RestoreResult& out);

} // namespace cudnnctl::ops
