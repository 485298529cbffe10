// SPDX-License-Identifier: Apache-2.0
// `purge`: the machine as it was before cudnnctl. The adopted originals go back to the CUDA
// home and cudnnctl is deactivated (the deactivation transaction of `adopt --undo`: no
// `current`, no loader drop-in, no CUDA-home links, no pkg-config file, ldconfig); then
// everything else cudnnctl wrote is deleted: the store, the generations, the download cache,
// the state directory (journal, history, backups, lock) and the prefix when it holds nothing
// else. What cudnnctl did not write (the configuration in /etc/cudnnctl, files someone else
// put into the prefix) is kept and named.
#pragma once

#include "ops/context.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

// One path purge deletes (or, under --dry-run, would).
struct PurgeItem {
  std::string path; // inside the root, e.g. /opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64
  std::string what; // "store entry cuDNN 9.1.0.70 (CUDA 12, linux-x86_64)", "download cache"
  uint64_t bytes = 0;
};

struct PurgeResult : Outcome {
  std::string cuda_home;          // where adopted originals go back
  size_t originals = 0;           // adopted originals put back (or to put back)
  bool deactivates = false;       // a generation was active, or originals were adopted
  std::vector<PurgeItem> removed; // in the order of deletion
  std::vector<std::string> kept;  // "PATH: why"
  uint64_t bytes = 0;             // the sum of removed[].bytes
  bool nothing = false;           // nothing of cudnnctl's was found
};

// `purge` (dry-run aware). Without `yes` and not a dry run: ErrorCode::confirmation_required,
// nothing changed. Store entries a running process maps: ErrorCode::environment unless
// --force. An adopted original neither in its store entry nor in its backup:
// ErrorCode::integrity, nothing changed. Interrupted (crash, kill): the deactivation is
// journaled (the next command or `recover` finishes it) and the deletions are renames to
// hidden names followed by removal, so running `purge --yes` again finishes the job.
[[nodiscard]] Status purge(Context& ctx, bool yes, PurgeResult& out);

} // namespace cudnnctl::ops
