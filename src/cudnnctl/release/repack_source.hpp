// SPDX-License-Identifier: Apache-2.0
// Install's side of repacks: whether the mirrors serve a repack of the selected archive that
// this host may use instead of NVIDIA's xz: only when a site pin names its sidecar, the
// sidecar fetched matches that pin and names exactly the manifest's archive.
#pragma once

#include "manifest/pins.hpp"
#include "release/resolve.hpp"
#include "release/sidecar.hpp"
#include "util/notes.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::release {

// --- Interface ---

struct RepackSource {
  Sidecar sidecar;
  std::string sidecar_url;
  std::string sidecar_sha256;
  std::vector<std::string> urls; // of the .tar.zst: the mirror that served the sidecar first
};

struct RepackLookup {
  std::optional<RepackSource> source; // set: stream the repack
  std::string reason;                 // unset: why the original is installed
  bool warn = false;                  // unset because something was wrong (not just absent)
};

// No sidecar pin for the archive's sha256 in `pins`: no network at all, reason says so. Else
// fetches cudnnctl-repack/<sha256>.json from r.bases in order (fetch::fetch_first), accepting
// only bytes whose sha256 is the pin, then checks that it names the manifest's archive. Any
// failure: no source, warn, the reason.
[[nodiscard]] RepackLookup find_repack(const Sources& sources, const Resolved& r,
                                       const manifest::PinSet& pins);

} // namespace cudnnctl::release
