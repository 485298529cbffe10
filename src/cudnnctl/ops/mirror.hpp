// SPDX-License-Identifier: Apache-2.0
// `mirror VERSION... --to DIR`: a directory laid out like NVIDIA's redist server, for fleets
// without Internet access. Any static web server (scripts/nginx-mirror.conf) serves it.
#pragma once

#include "manifest/manifest.hpp"
#include "ops/context.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

// File in DIR holding the site pins (pins.d format) of every manifest mirrored into DIR.
inline constexpr const char* k_mirror_pins_file = "cudnnctl-pins.sha256";
// Hidden directory in DIR: the lock and resumable downloads (<sha256>.partial).
inline constexpr const char* k_mirror_work_dir = ".cudnnctl";

struct MirrorOptions {
  std::vector<std::string> versions; // release labels or full versions
  std::string to;                    // host path (never under --root)
  std::optional<std::string> repack; // --repack FORMAT: "zstd" is the only one
};

// The repack of one archive (--repack zstd): DIR/<relative_path minus .tar.xz>.tar.zst and
// DIR/cudnnctl-repack/<original sha256>.json.
struct MirrorRepack {
  std::string relative_path; // of the .tar.zst
  std::string sha256;        // of the .tar.zst (unknown under --dry-run when not present)
  uint64_t size = 0;
  std::string sidecar; // "cudnnctl-repack/<original sha256>.json"
  std::string sidecar_sha256;
  std::string state; // "present", "written", "would write"
};

// One archive to place in DIR.
struct MirrorArchive {
  manifest::Selection selection;
  std::vector<std::string> urls; // beside the manifest first, then the other mirrors
  std::string state;             // "present", "downloaded", "would download"
  std::optional<MirrorRepack> repack;
};

// One manifest to copy into DIR, with the archives selected from it.
struct MirrorRelease {
  std::string file; // "redistrib_9.1.0.json", the name that answered
  std::string label;
  manifest::Version parsed_label; // `label` parsed with the manifest
  std::string version;
  std::string bytes; // exactly as served
  std::string sha256;
  std::string url;
  std::string pin; // "built-in", "site", "mirror directory", "none"
  std::vector<MirrorArchive> archives;
  bool written = false;
};

// One signed recall list carried into DIR/cudnnctl-recalls/ (from this host's recalls.d).
struct MirrorRecallList {
  std::string source; // /etc/cudnnctl/recalls.d/site.json
  std::string file;   // DIR/cudnnctl-recalls/site.json
  std::string state;  // "valid" or "expired" (only verified lists are carried)
  bool written = false;
};

struct MirrorResult : Outcome {
  bool planned = false;   // every manifest fetched: `to` and `pins_file` are set
  bool completed = false; // every release mirrored (or, under --dry-run, planned)
  std::string to;
  std::string pins_file;
  std::vector<MirrorRelease> releases;
  int downloaded = 0; // or, under --dry-run, to download
  int present = 0;
  uint64_t downloaded_bytes = 0;
  int repacked = 0;                           // repacks written (or, under --dry-run, to write)
  std::vector<MirrorRecallList> recall_lists; // carried lists
  std::vector<std::string> recalls_removed;   // DIR/cudnnctl-recalls files no longer carried
  std::string recalls_index;                  // DIR/cudnnctl-recalls/index, "" when none
};

// For each VERSION: fetches redistrib_<label>.json from the mirrors (--mirror, config,
// NVIDIA), checks it against its pin (built-in, <root>/etc/cudnnctl/pins.d, and the pins
// DIR already holds: mismatch is ErrorCode::integrity; unpinned is a warning, or
// ErrorCode::integrity under --require-pin), selects the "cudnn" archives for the platforms
// (--platform P[,P...] or "all"; default: config, else this machine) and CUDA majors
// (--cuda N; default: every variant offered), and places each archive at
// DIR/<relative_path> after checking its size and sha256 (downloaded into
// DIR/.cudnnctl/partial/, resumable, then renamed into place). An archive already in DIR
// that verifies is kept, not downloaded again. Then the manifest is written as
// DIR/redistrib_<label>.json byte for byte, and DIR/cudnnctl-pins.sha256 (sha256sum lines
// for every manifest mirrored into DIR so far) is rewritten. Files that already hold the
// right bytes are not rewritten. Archives first, manifest last: a server never offers a
// manifest whose archives are not there yet.
// --repack zstd: after each archive is in place, its repack is written beside it (see
// release/repack.hpp; kept when the sidecar names this archive and the .tar.zst matches the
// sidecar) and its sidecar under DIR/cudnnctl-repack/, before the manifest; the pins file
// then also pins every sidecar ("<sha256>  cudnnctl-repack/<original sha256>.json"). Sidecar
// pins already in the pins file are kept. An unknown FORMAT: ErrorCode::usage.
// Then the signed recall lists of <root>/etc/cudnnctl/recalls.d that verify (valid or
// expired; others are warned about and not carried) are copied byte for byte, each with its
// .sig, to DIR/cudnnctl-recalls/, and DIR/cudnnctl-recalls/index names them (one per line);
// lists that DIR carried before and this host no longer has are removed. Nothing is written
// there while this host has no list and DIR has no cudnnctl-recalls/. Hosts with
// `recalls_from_mirror = true` read them (ops/recalls.hpp). No VERSION: only the recall
// lists (nothing to carry either: ErrorCode::usage).
// Errors: usage (unknown version, platform or variant, --manifest given), network (3),
// integrity (4), environment (1), busy (6: another `mirror` into the same DIR).
// --dry-run: fetches the manifests, reports what would be downloaded, writes nothing.
[[nodiscard]] Status mirror(Context& ctx, const MirrorOptions& options, MirrorResult& out);

} // namespace cudnnctl::ops
