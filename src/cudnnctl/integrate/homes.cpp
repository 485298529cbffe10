// SPDX-License-Identifier: Apache-2.0
#include "integrate/homes.hpp"

#include "host/host.hpp"
#include "util/fs.hpp"

#include <algorithm>

namespace cudnnctl::integrate {

std::vector<std::string> builds_for_home(const std::vector<SlotCandidate>& active, int cuda) {
  std::vector<SlotCandidate> mine;
  for (const auto& c : active) {
    if (c.cuda == cuda) {
      mine.push_back(c);
    }
  }
  std::stable_sort(mine.begin(), mine.end(), [](const SlotCandidate& a, const SlotCandidate& b) {
    if (a.primary != b.primary) {
      return a.primary;
    }
    return a.major > b.major;
  });
  std::vector<std::string> out;
  std::vector<int> majors;
  for (const auto& c : mine) {
    if (std::find(majors.begin(), majors.end(), c.major) == majors.end()) {
      majors.push_back(c.major);
      out.push_back(c.entry);
    }
  }
  return out;
}

std::vector<ManagedHome> managed_homes(const store::Layout& layout, const store::Config& config,
                                       const std::vector<store::EntryInfo>& picks,
                                       const std::vector<store::EntryInfo>& active,
                                       bool has_primary) {
  std::vector<ManagedHome> out;
  const auto homes = config.homes();
  for (const auto& h : homes) {
    ManagedHome m;
    m.home = h;
    m.dirs = locate_home(layout, h);
    if (!m.dirs.real_home.empty() && std::any_of(out.begin(), out.end(), [&](const ManagedHome& o) {
          return o.dirs.real_home == m.dirs.real_home;
        })) {
      continue; // /usr/local/cuda and the cuda-13.0 it names: one home
    }
    if (auto tk = host::detect_cuda(layout.root(), h)) {
      m.cuda = tk->major;
    }
    out.push_back(std::move(m));
  }
  if (homes.size() == 1) {
    out.front().builds = picks; // one home: what it always got
    return out;
  }
  std::vector<SlotCandidate> cands;
  for (size_t i = 0; i < active.size(); ++i) {
    cands.push_back(candidate_of(active[i], has_primary && i == 0));
  }
  for (auto& m : out) {
    if (m.dirs.real_home.empty()) {
      continue;
    }
    if (!m.cuda) {
      m.warning = "cannot tell the CUDA major of the toolkit in " + m.home +
                  " (no version.json, cuda_runtime_api.h or libcudart there): no cuDNN links "
                  "are made there (cuda_homes names several homes; each gets the build of its "
                  "own CUDA major)";
      continue;
    }
    for (const auto& name : builds_for_home(cands, *m.cuda)) {
      for (const auto& i : active) {
        if (i.name == name) {
          m.builds.push_back(i);
        }
      }
    }
  }
  return out;
}

std::vector<HomeReport> report_homes(const store::Layout& layout, const store::Config& config) {
  std::vector<HomeReport> out;
  for (const auto& h : config.homes()) {
    HomeReport r;
    r.home = h;
    if (auto tk = host::detect_cuda(layout.root(), h)) {
      r.cuda = tk->major;
    }
    auto dirs = locate_home(layout, h);
    for (const auto& [dir, name] :
         {std::pair{dirs.lib_dir, "libcudnn.so"}, std::pair{dirs.include_dir, "cudnn.h"}}) {
      if (dir.empty() || !r.entry.empty()) {
        continue;
      }
      if (auto text = util::read_link(layout.host(dir / name))) {
        if (auto ref = store_ref(layout, dir, text->string())) {
          r.entry = ref->first;
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

} // namespace cudnnctl::integrate
