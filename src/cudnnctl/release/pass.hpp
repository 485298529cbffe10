// SPDX-License-Identifier: Apache-2.0
// Install's one pass over a release's bytes (docs/ARCHITECTURE.md "Streaming" and "Repacks"):
// the mirror's repack when a site pin vouches for its sidecar and every extracted file matches
// it, else NVIDIA's archive; downloaded (or read from the cache or --archive), hashed and
// extracted into a staging directory at the same time. The pass knows no transaction and no
// command: what the caller adds (the transaction's notes, install's early runtime probe) comes
// in as callbacks of the request.
#pragma once

#include "archive/extract.hpp"
#include "core/result.hpp"
#include "manifest/manifest.hpp"
#include "release/repack_source.hpp"
#include "release/resolve.hpp"
#include "release/sidecar.hpp"
#include "store/entry.hpp"
#include "util/notes.hpp"
#include "util/progress.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::release {

// --- Interface ---

// Whether a component set ("runtime", "headers", "static") keeps an archive path.
[[nodiscard]] bool wanted_path(const std::vector<std::string>& components, std::string_view path);

// --archive FILE.tar.zst: a site mirror's repack, installed only through a pinned sidecar.
[[nodiscard]] bool is_repack_file(const std::string& path);

// ErrorCode::environment when `dir`'s filesystem has less than `needed` bytes free.
[[nodiscard]] Status check_free_space(const std::filesystem::path& dir, uint64_t needed);

// The mirror's repack a pass read instead of NVIDIA's archive (install's data.archive.repack).
struct RepackRef {
  std::string url;
  std::string sha256;
  uint64_t size = 0;
  std::string sidecar_url;
  std::string sidecar_sha256;
};

// Which form of the archive a pass reads, and why.
struct FormChoice {
  std::string form;   // "repack" or "xz" (NVIDIA's archive)
  std::string reason; // why
  std::optional<RepackRef> repack;
};

// -vv: where the time goes (docs/BENCHMARKS.md), in seconds since the pass's stream began.
class PassClock {
public:
  explicit PassClock(const util::Notes& notes) : m_notes(notes) {}
  void start() { m_t0 = std::chrono::steady_clock::now(); }
  [[nodiscard]] bool started() const { return m_t0.has_value(); }
  // "timing: WHAT at S s" at -vv; nothing before start().
  void operator()(const char* what) const;

private:
  const util::Notes& m_notes;
  std::optional<std::chrono::steady_clock::time_point> m_t0;
};

// What a pass does per entry beyond the extraction's own checks (archive::ExtractOptions).
struct PassHooks {
  std::function<Status(const archive::Entry&)> vet;
  std::function<void(const archive::Entry&)> file_done;
  std::function<void()> link_done;
  std::function<void()> restarted; // the pass starts again from byte 0, its tree emptied
  std::function<void()> finished;  // the bytes verified, before the per-file check
};

struct PassRequest {
  const Resolved& resolved;
  std::vector<std::string> components;
  std::optional<std::string> archive; // --archive FILE (host path)
  std::optional<std::string> sidecar; // --sidecar FILE
  Sources sources;
  std::filesystem::path cache_dir;
  std::filesystem::path staging; // empty, created by the caller
  util::ProgressStyle progress = util::ProgressStyle::none;
  // A trusted repack's pass begins: the caller's hooks for its entries (the vet is the pass's
  // own: the sidecar's). Unset: none.
  std::function<PassHooks(const SidecarIndex&)> repack_hooks;
  // A repack's pass failed and NVIDIA's archive follows: what the hooks did is void.
  std::function<void()> repack_refused;
  // The form is chosen: before NVIDIA's pass, after a repack's pass succeeded.
  std::function<void(const FormChoice&)> chose;
};

struct PassResult {
  std::vector<archive::Entry> entries;
  std::string url; // what the entry records as its source: NVIDIA's archive, or --archive
  FormChoice form;
};

// The pass. --archive FILE.tar.zst: that repack through its pinned sidecar, or a refusal
// (there is no original to fall back to). A repack refused for its bytes or its sidecar
// (not for the environment) falls back to NVIDIA's archive, with a warning, from an emptied
// staging directory. `clock` starts when the bytes begin to flow.
[[nodiscard]] Result<PassResult> run_pass(const PassRequest& request, util::Notes& notes,
                                          PassClock& clock);

// Whether the mirrors serve a repack this host may use (release/repack_source.hpp);
// unreadable pins are a reason to warn and install NVIDIA's archive.
[[nodiscard]] RepackLookup lookup_repack(const Sources& sources, const Resolved& r);

// The sidecar of the local repack `archive` (--sidecar, else found beside it), accepted only
// when a site pin names it. Errors: usage (no sidecar found), integrity (no pin for a repack
// of this archive, the sidecar differs from its pin or names another archive).
[[nodiscard]] Result<RepackSource> local_repack(const Sources& sources, const std::string& archive,
                                                const std::optional<std::string>& sidecar,
                                                const Resolved& r);

// The metadata of the store entry the pass's tree becomes: every file's sha256 as extracted.
[[nodiscard]] store::EntryInfo entry_info(const std::string& name, const manifest::Selection& sel,
                                          const std::vector<std::string>& components,
                                          const PassResult& pass);

} // namespace cudnnctl::release
