// SPDX-License-Identifier: Apache-2.0
#include "ops/early_probe.hpp"

#include "doctor/ldconf.hpp"
#include "doctor/loader.hpp"
#include "doctor/rootfs.hpp"
#include "elf/elf.hpp"

#include <algorithm>
#include <sys/stat.h>

namespace cudnnctl::ops {

namespace {

namespace fs = std::filesystem;

std::optional<EarlyProbe::Links> read_links(const fs::path& file) {
  auto d = elf::read_dynamic(file);
  if (!d) {
    return std::nullopt;
  }
  EarlyProbe::Links l;
  l.needed = d->needed;
  for (const auto* p : {&d->runpath, &d->rpath}) {
    if (*p) {
      l.run_paths.push_back(**p);
    }
  }
  return l;
}

} // namespace

EarlyProbe::EarlyProbe(smoke::WarmHelper& helper, fs::path tree, smoke::ProbeRequest request,
                       const release::SidecarIndex& sidecar)
    : m_helper(helper), m_tree(doctor::clean(tree)), m_request(std::move(request)),
      m_sidecar(sidecar), m_multiarch(doctor::machine_multiarch()) {
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
    it->second = read_links(m_tree / file); // verified, so whole and closed
  }
  if (!it->second) {
    return false;
  }
  const Links& links = *it->second;
  const std::string parent = fs::path(file).parent_path().generic_string();
  const fs::path own_dir = doctor::clean(m_tree / parent);
  for (const auto& value : links.run_paths) {
    for (const auto& d : doctor::expand_search_path(value, own_dir.string(), m_multiarch)) {
      if (d.empty() || d.front() != '/') {
        return false; // relative to the child's working directory: not judged here
      }
      const fs::path rel = fs::path(d).lexically_relative(m_tree);
      if (!rel.empty() && !rel.string().starts_with("..") && fs::path(d) != own_dir) {
        return false; // another directory of the tree: the loader could search it
      }
      // Its own directory, or outside the staging tree (as for the probe after the pass).
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
    if (!target || !on_disk(candidate) || !ready(*target, seen)) {
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
  return file && on_disk(m_lib + "/" + name) && ready(*file, seen);
}

bool EarlyProbe::on_disk(const std::string& path) const {
  struct stat st;
  return ::stat((m_tree / path).c_str(), &st) == 0 && S_ISREG(st.st_mode);
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
  send_ready();
}

void EarlyProbe::link_done() {
  std::lock_guard lock(m_mutex);
  if (m_stopped || m_verified.empty()) {
    return;
  }
  send_ready();
}

void EarlyProbe::send_ready() {
  using EarlyAs = smoke::WarmHelper::EarlyAs;
  auto send = [&](const std::string& name, EarlyAs as) {
    if (!m_helper.send_early(m_request.dir, name, as)) {
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
    if (unsent(name) && ready_to_send(name) && !send(name, EarlyAs::library)) {
      return;
    }
  }
  // The shim last: its cudnnGetVersion() loads libcudnn_graph through the loader's search
  // (its run path, then the ld.so cache), and later calls the other libraries.
  if (m_sent.size() == m_request.load.size() && unsent(m_request.shim) &&
      ready_to_send(m_request.shim)) {
    (void)send(m_request.shim, EarlyAs::shim);
  }
}

} // namespace cudnnctl::ops
