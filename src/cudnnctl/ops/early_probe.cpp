// SPDX-License-Identifier: Apache-2.0
#include "ops/early_probe.hpp"

#include "elf/elf.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace cudnnctl::ops {

namespace {

namespace fs = std::filesystem;

std::optional<EarlyProbe::Links> read_elf(const fs::path& file) {
  auto d = elf::read_dynamic(file);
  if (!d) {
    return std::nullopt;
  }
  EarlyProbe::Links l;
  l.needed = d->needed;
  for (const auto* p : {&d->runpath, &d->rpath}) {
    if (*p) {
      for (const auto& part : util::split(**p, ':')) {
        l.run_paths.emplace_back(part);
      }
    }
  }
  return l;
}

// A run path element with $ORIGIN (or ${ORIGIN}) put as `dir` (relative to the tree).
std::string with_origin(std::string rp, const std::string& dir) {
  for (const char* origin : {"${ORIGIN}", "$ORIGIN"}) {
    for (auto pos = rp.find(origin); pos != std::string::npos; pos = rp.find(origin)) {
      rp.replace(pos, std::string_view(origin).size(), dir);
    }
  }
  return rp;
}

bool has_origin(const std::string& rp) {
  return rp.find("$ORIGIN") != std::string::npos || rp.find("${ORIGIN}") != std::string::npos;
}

} // namespace

EarlyProbe::EarlyProbe(smoke::WarmHelper& helper, fs::path tree, smoke::ProbeRequest request,
                       const release::SidecarIndex& sidecar, ReadLinks read)
    : m_helper(helper), m_tree(std::move(tree)), m_request(std::move(request)), m_sidecar(sidecar),
      m_read(read ? std::move(read) : ReadLinks(read_elf)) {
  const fs::path rel = m_request.dir.lexically_relative(m_tree);
  if (!rel.empty() && !rel.string().starts_with("..") && rel != ".") {
    m_lib = rel.generic_string();
  }
}

std::vector<std::string> EarlyProbe::sent() const {
  std::lock_guard lock(m_mutex);
  return m_sent;
}

std::optional<std::string> EarlyProbe::resolve(const std::string& path) const {
  std::string p = path;
  for (int hops = 0; hops < 16; ++hops) {
    const release::SidecarEntry* e = m_sidecar.find(p);
    if (!e) {
      return std::nullopt;
    }
    if (e->kind == "file") {
      return p;
    }
    if (e->kind != "symlink" || e->target.empty() || e->target.front() == '/') {
      return std::nullopt;
    }
    p = (fs::path(p).parent_path() / e->target).lexically_normal().generic_string();
    if (p.starts_with("..")) {
      return std::nullopt;
    }
  }
  return std::nullopt; // a loop of links
}

bool EarlyProbe::ready(const std::string& file, std::set<std::string>& seen) {
  if (!seen.insert(file).second) {
    return true; // checked (or being checked) on this walk
  }
  if (!m_verified.contains(file)) {
    return false;
  }
  auto [it, inserted] = m_links.try_emplace(file);
  if (inserted) {
    it->second = m_read(m_tree / file); // verified, so whole and closed
  }
  if (!it->second) {
    return false;
  }
  const Links& links = *it->second;
  const std::string parent = fs::path(file).parent_path().generic_string();
  const std::string dir = parent.empty() ? "." : parent;
  for (const auto& rp : links.run_paths) {
    if (!has_origin(rp)) {
      if (rp.empty() || rp.front() != '/') {
        return false; // relative to the child's working directory: not judged here
      }
      continue; // absolute: outside the staging tree, as for the probe after the pass
    }
    const std::string in_tree = fs::path(with_origin(rp, dir)).lexically_normal().generic_string();
    const std::string trimmed =
        in_tree.ends_with('/') ? in_tree.substr(0, in_tree.size() - 1) : in_tree;
    if (!trimmed.starts_with("..") && trimmed != dir) {
      return false; // another directory of the tree: the loader could search it
    }
  }
  for (const auto& name : links.needed) {
    if (name.find('/') != std::string::npos) {
      return false;
    }
    const std::string candidate = parent.empty() ? name : parent + "/" + name;
    if (!m_sidecar.find(candidate)) {
      continue; // not in the tree (the vet keeps unlisted entries out): a system library
    }
    auto target = resolve(candidate);
    if (!target || !ready(*target, seen)) {
      return false;
    }
  }
  return true;
}

bool EarlyProbe::ready_to_send(const std::string& name) {
  if (m_lib.empty() || name.find('/') != std::string::npos) {
    return false;
  }
  auto file = resolve(m_lib + "/" + name);
  std::set<std::string> seen;
  return file && ready(*file, seen);
}

void EarlyProbe::abandon() {
  std::lock_guard lock(m_mutex);
  m_stopped = true;
  m_helper.discard_early();
}

void EarlyProbe::file_done(const archive::Entry& file) {
  if (!m_sidecar.verified(file)) {
    return; // the check after the pass names the difference; never loaded
  }
  std::lock_guard lock(m_mutex);
  if (m_stopped) {
    return;
  }
  m_verified.insert(file.path);
  auto send = [&](const std::string& name, bool shim) {
    if (!m_helper.send_early(m_request.dir, name, shim)) {
      m_stopped = true;
      return false;
    }
    m_sent.push_back(name);
    return true;
  };
  auto unsent = [&](const std::string& name) {
    return std::find(m_sent.begin(), m_sent.end(), name) == m_sent.end();
  };
  for (const auto& name : m_request.load) {
    if (unsent(name) && ready_to_send(name) && !send(name, false)) {
      return;
    }
  }
  // The shim last: its cudnnGetVersion() loads libcudnn_graph through the loader's search
  // (its run path, then the ld.so cache), and later calls the other libraries.
  if (m_sent.size() == m_request.load.size() && unsent(m_request.shim) &&
      ready_to_send(m_request.shim)) {
    (void)send(m_request.shim, true);
  }
}

} // namespace cudnnctl::ops
