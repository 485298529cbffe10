// SPDX-License-Identifier: Apache-2.0
#include "integrate/slots.hpp"

#include "host/host.hpp"
#include "store/slots.hpp"
#include "store/view.hpp"

#include <algorithm>

namespace cudnnctl::integrate {

std::vector<SlotCandidate> pick_per_major(std::vector<SlotCandidate> all,
                                          std::optional<int> toolkit_cuda) {
  std::vector<SlotCandidate> out;
  auto better = [&](const SlotCandidate& a, const SlotCandidate& b) {
    if (a.primary != b.primary) {
      return a.primary;
    }
    bool am = toolkit_cuda && a.cuda == *toolkit_cuda;
    bool bm = toolkit_cuda && b.cuda == *toolkit_cuda;
    if (am != bm) {
      return am;
    }
    return a.cuda > b.cuda;
  };
  for (const auto& c : all) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const SlotCandidate& o) { return o.major == c.major; });
    if (it == out.end()) {
      out.push_back(c);
    } else if (better(c, *it)) {
      *it = c;
    }
  }
  std::sort(out.begin(), out.end(), [](const SlotCandidate& a, const SlotCandidate& b) {
    if (a.primary != b.primary) {
      return a.primary;
    }
    return a.major > b.major;
  });
  return out;
}

std::string pick_reason(const SlotCandidate& chosen, const std::vector<SlotCandidate>& all,
                        std::optional<int> toolkit_cuda) {
  // The order of `better` in pick_per_major: primary, then the toolkit's CUDA major, then the
  // highest CUDA major.
  std::string major = std::to_string(chosen.major);
  if (chosen.primary) {
    return "the primary slot";
  }
  auto rivals = std::count_if(all.begin(), all.end(), [&](const SlotCandidate& c) {
    return c.major == chosen.major && c.entry != chosen.entry;
  });
  if (rivals == 0) {
    return "the only slot of cuDNN " + major;
  }
  if (toolkit_cuda && chosen.cuda == *toolkit_cuda) {
    return "matches the default toolkit's CUDA major (CUDA " + std::to_string(*toolkit_cuda) + ")";
  }
  return "the highest CUDA major (CUDA " + std::to_string(chosen.cuda) + ") among the cuDNN " +
         major + " slots" +
         (toolkit_cuda
              ? ", none matching the default toolkit's CUDA " + std::to_string(*toolkit_cuda)
              : std::string(", no default toolkit detected"));
}

SlotCandidate candidate_of(const store::EntryInfo& info, bool primary) {
  return {info.name, store::slot_major(store::slot_id(info)), info.cuda_major, primary};
}

Result<std::vector<store::EntryInfo>> active_entries(const store::Layout& layout,
                                                     const std::optional<std::string>& primary) {
  std::vector<std::string> warnings;
  std::vector<store::EntryInfo> infos;
  if (primary) {
    TRY_ASSIGN(store::EntryInfo info, store::read_entry(layout, *primary));
    infos.push_back(std::move(info));
  }
  TRY_ASSIGN(auto links, store::list_slot_links(layout, warnings));
  if (links.empty()) {
    return infos;
  }
  TRY_ASSIGN(auto gens, store::list_generations(layout, warnings));
  for (const auto& l : links) {
    auto g = std::find_if(gens.begin(), gens.end(),
                          [&](const store::Generation& x) { return x.number == l.generation; });
    if (g == gens.end()) {
      continue;
    }
    auto info = store::read_entry(layout, g->entry);
    if (!info || (primary && info->name == *primary)) {
      continue;
    }
    infos.push_back(std::move(*info));
  }
  return infos;
}

Result<std::vector<store::EntryInfo>> loader_entries(const store::Layout& layout,
                                                     const store::Config& config,
                                                     const std::optional<std::string>& primary) {
  TRY_ASSIGN(auto infos, active_entries(layout, primary));
  std::vector<SlotCandidate> all;
  for (size_t i = 0; i < infos.size(); ++i) {
    all.push_back(candidate_of(infos[i], primary && i == 0));
  }
  std::optional<int> toolkit;
  if (all.size() > 1) {
    if (auto tk = host::detect_cuda(layout.root(), config.cuda_home)) {
      toolkit = tk->major;
    }
  }
  std::vector<store::EntryInfo> out;
  for (const auto& pick : pick_per_major(std::move(all), toolkit)) {
    for (auto& i : infos) {
      if (i.name == pick.entry) {
        out.push_back(i);
        break;
      }
    }
  }
  return out;
}

} // namespace cudnnctl::integrate
