// SPDX-License-Identifier: Apache-2.0
// The runtime probe's loads during a repack's pass (issue 21): install's GPU child (the
// --warm helper, smoke::WarmHelper) loads each library of the probe as soon as the pass has
// verified it and every library of the tree it needs against the pinned sidecar, instead of
// all of them after the pass (0.04 s on the H200, most of it in the largest libraries, which
// the archive holds before the last ones). What the child loads early is exactly what it would
// load after the pass: files whose every byte matched the sidecar. Nothing else can be found
// in the tree by the loader meanwhile: the sidecar's vet (release::SidecarIndex::vet) keeps
// every entry it does not list off the disk, and a library is sent only when each of its
// DT_NEEDED names is either a listed file of its own directory, verified (recursively), or
// no entry of the tree (a system library). A library whose run path points into the tree
// elsewhere, or that cannot be read, waits for the probe after the pass. A name is sent only
// once it resolves on disk (the SONAME links come later in the archive than their files), and
// so is each DT_NEEDED name of the tree; a symlink made by the pass sends again what became
// ready. The shim goes last,
// once every other library was sent: its cudnnGetVersion() dlopen()s libcudnn_graph by name,
// which before that file is in place the loader would find elsewhere (the ld.so cache).
#pragma once

#include "archive/extract.hpp"
#include "release/sidecar.hpp"
#include "smoke/runner.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

class EarlyProbe {
public:
  // A library's DT_NEEDED names and run paths (the DT_RUNPATH and DT_RPATH values).
  struct Links {
    std::vector<std::string> needed;
    std::vector<std::string> run_paths;
  };

  // `tree`: the staging directory (absolute) the pass extracts into; `request`: the runtime
  // probe's (its dir is `tree`/lib); `sidecar` outlives this.
  EarlyProbe(smoke::WarmHelper& helper, std::filesystem::path tree, smoke::ProbeRequest request,
             const release::SidecarIndex& sidecar);

  // ExtractOptions::file_done: thread-safe; sends what became ready.
  void file_done(const archive::Entry& file);
  // ExtractOptions::link_done: a symlink is on disk now; sends what became ready.
  void link_done();
  // The pass starts again from byte 0 (its tree emptied): nothing more is sent, and the child,
  // which holds libraries of the tree that was, declines the probe (WarmHelper::discard_early):
  // a child of its own probes the tree the pass ends with.
  void abandon();
  // The files sent to the child so far, in order (the shim last).
  [[nodiscard]] std::vector<std::string> sent() const;
  // Files of the probe in all.
  [[nodiscard]] size_t wanted() const { return 1 + m_request.load.size(); }

private:
  // Under the lock: `path` (relative to the tree) through the sidecar's symlinks to the file
  // it names; nullopt when it leads nowhere listed.
  [[nodiscard]] std::optional<std::string> resolve(const std::string& path) const;
  // Under the lock: the file and everything it needs in the tree are verified.
  [[nodiscard]] bool ready(const std::string& file, std::set<std::string>& seen);
  [[nodiscard]] bool ready_to_send(const std::string& name);
  // `path` (relative to the tree) leads, through every link on its way, to a regular file on
  // disk: what the child's dlopen() and the loader's search for a DT_NEEDED name will open.
  // A link later in the archive than its file is not there yet (issue 34, F6).
  [[nodiscard]] bool on_disk(const std::string& path) const;
  // Under the lock: sends every library that is ready, the shim last.
  void send_ready();

  smoke::WarmHelper& m_helper;
  const std::filesystem::path m_tree;
  const smoke::ProbeRequest m_request;
  std::string m_lib; // the request's dir relative to the tree ("lib")
  const release::SidecarIndex& m_sidecar;
  const std::string m_multiarch; // for $LIB in run paths
  mutable std::mutex m_mutex;
  std::set<std::string> m_verified;                    // tree-relative file paths
  std::map<std::string, std::optional<Links>> m_links; // read once per file; nullopt: unreadable
  std::vector<std::string> m_sent;                     // request file names
  bool m_stopped = false;                              // a send failed, or abandon()
};

} // namespace cudnnctl::ops
