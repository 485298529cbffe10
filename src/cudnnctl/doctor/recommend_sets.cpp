// SPDX-License-Identifier: Apache-2.0
// Several frameworks that no single release serves: split them into groups, each served by
// one release in its own slot (cuDNN major, CUDA major), with every slot different. And when
// even that fails: the smallest set of constraints that cannot be met together.
#include "doctor/recommend_impl.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <functional>
#include <map>

namespace cudnnctl::doctor::detail {

namespace {

using SlotKey = std::pair<int, int>; // cuDNN major, CUDA major

// Whether need `i` constrains the release at all (TensorRT 10 does not).
bool constrains(const RecommendInput& in, size_t i) {
  auto builds = in.frameworks[i].builds();
  return std::any_of(builds.begin(), builds.end(),
                     [](const UsableBuild& b) { return b.check != Check::optional; });
}

// Set partitions of {0..n-1} with exactly k blocks, as restricted growth strings.
void partitions(size_t n, size_t k, std::vector<size_t>& cur, size_t used,
                std::vector<std::vector<size_t>>& out) {
  if (cur.size() == n) {
    if (used == k) {
      out.push_back(cur);
    }
    return;
  }
  size_t remaining = n - cur.size();
  for (size_t b = 0; b <= std::min(used, k - 1); ++b) {
    size_t next_used = b == used ? used + 1 : used;
    if (next_used + remaining - 1 < k) {
      continue; // cannot reach k blocks any more
    }
    cur.push_back(b);
    partitions(n, k, cur, next_used, out);
    cur.pop_back();
  }
}

struct GroupOptions {
  std::vector<size_t> needs;
  std::vector<std::pair<SlotKey, std::vector<Candidate>>> slots; // best slot first
};

GroupOptions options_for(const RecommendInput& in, const Compat& compat, const Active& base,
                         std::vector<size_t> needs) {
  Active a = base;
  a.needs = needs;
  std::map<SlotKey, std::vector<Pair>> by_slot;
  for (const auto& p : feasible(in, compat, a)) {
    by_slot[{major_of(p.release->version), p.cuda}].push_back(p);
  }
  GroupOptions g;
  g.needs = std::move(needs);
  for (auto& [key, pairs] : by_slot) {
    g.slots.push_back({key, rank(pairs, in, compat, g.needs)});
  }
  // Best slot first: the one whose best candidate ranks highest (newest, then CUDA).
  std::stable_sort(g.slots.begin(), g.slots.end(), [&](const auto& x, const auto& y) {
    const Candidate& a1 = x.second.front();
    const Candidate& b1 = y.second.front();
    if (int v = compare_versions(a1.version, b1.version); v != 0) {
      return v > 0;
    }
    return x.first.second > y.first.second;
  });
  return g;
}

bool assign(const std::vector<GroupOptions>& groups, size_t i, std::vector<SlotKey>& taken,
            std::vector<size_t>& choice) {
  if (i == groups.size()) {
    return true;
  }
  for (size_t s = 0; s < groups[i].slots.size(); ++s) {
    const SlotKey& key = groups[i].slots[s].first;
    if (std::find(taken.begin(), taken.end(), key) != taken.end()) {
      continue;
    }
    taken.push_back(key);
    choice.push_back(s);
    if (assign(groups, i + 1, taken, choice)) {
      return true;
    }
    taken.pop_back();
    choice.pop_back();
  }
  return false;
}

// "torch 2.3.1 (CUDA 11 builds: cuDNN 8.x with minor >= 7; CUDA 12 builds: cuDNN 8.x with
// minor >= 9)": per CUDA major, the rules its builds accept.
std::string describe(const RecommendInput& in, size_t i) {
  const auto& n = in.frameworks[i];
  std::map<int, std::vector<std::string>> rules;
  for (const auto& b : n.builds()) {
    std::string r =
        b.check == Check::optional ? "cuDNN optional" : rule_text(b.variant->cudnn, b.check);
    auto& list = rules[b.variant->cuda_major];
    if (std::find(list.begin(), list.end(), r) == list.end()) {
      list.push_back(r);
    }
  }
  std::vector<std::string> parts;
  for (const auto& [cuda, list] : rules) {
    parts.push_back("CUDA " + std::to_string(cuda) + " builds: " + util::join(list, " or "));
  }
  return n.label() + " (" + util::join(parts, "; ") + ")";
}

} // namespace

std::optional<SetAnswer> solve_sets(const RecommendInput& in, const Compat& compat,
                                    const Active& a) {
  std::vector<size_t> hard, free;
  for (size_t i : a.needs) {
    (constrains(in, i) ? hard : free).push_back(i);
  }
  if (hard.empty()) {
    hard = a.needs; // nothing constrains: one group
  }
  // Fewest slots first; more than 6 frameworks would make this slow and is not a node.
  size_t max_k = hard.size() <= 6 ? hard.size() : 1;
  for (size_t k = 1; k <= max_k; ++k) {
    std::vector<std::vector<size_t>> parts;
    std::vector<size_t> cur;
    partitions(hard.size(), k, cur, 0, parts);
    for (const auto& rgs : parts) {
      std::vector<std::vector<size_t>> groups(k);
      for (size_t i = 0; i < rgs.size(); ++i) {
        groups[rgs[i]].push_back(hard[i]);
      }
      groups[0].insert(groups[0].end(), free.begin(), free.end());
      std::vector<GroupOptions> opts;
      bool empty = false;
      for (auto& g : groups) {
        opts.push_back(options_for(in, compat, a, g));
        empty = empty || opts.back().slots.empty();
      }
      std::vector<SlotKey> taken;
      std::vector<size_t> choice;
      if (empty || !assign(opts, 0, taken, choice)) {
        continue;
      }
      SetAnswer ans;
      for (size_t g = 0; g < opts.size(); ++g) {
        auto& [key, cands] = opts[g].slots[choice[g]];
        Slot slot;
        slot.cudnn_major = key.first;
        slot.cuda = key.second;
        slot.chosen = cands.front();
        slot.alternatives.assign(cands.begin() + 1, cands.end());
        for (size_t i : opts[g].needs) {
          slot.frameworks.push_back(in.frameworks[i].label());
        }
        ans.groups.push_back(opts[g].needs);
        ans.slots.push_back(std::move(slot));
      }
      return ans;
    }
  }
  return std::nullopt;
}

bool solvable(const RecommendInput& in, const Compat& compat, const Active& a) {
  if (!feasible(in, compat, a).empty()) {
    return true;
  }
  return a.needs.size() > 1 && solve_sets(in, compat, a).has_value();
}

Conflict explain_conflict(const RecommendInput& in, const Compat& compat) {
  // The constraints that can be switched off, with how they read in the message.
  struct Item {
    std::string text;
    std::function<void(Active&)> on;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < in.frameworks.size(); ++i) {
    items.push_back({describe(in, i), [i](Active& a) { a.needs.push_back(i); }});
  }
  if (in.cuda_major) {
    items.push_back(
        {"the CUDA " + std::to_string(*in.cuda_major) + " toolkit (" + in.cuda_source + ")",
         [](Active& a) { a.toolkit = true; }});
  }
  if (in.driver) {
    items.push_back({"driver " + *in.driver, [](Active& a) { a.driver = true; }});
  }
  if (!judged_gpus(in).empty()) {
    items.push_back(
        {"compute capability " + in.compute_capability.value_or("?") + " (" + in.gpus_source + ")",
         [](Active& a) { a.cc = true; }});
  }
  if (in.recalls && !in.recalls->recalls().empty()) {
    items.push_back({"the recall lists", [](Active& a) { a.recall = true; }});
  }
  if (in.require_pin) {
    items.push_back({"--require-pin", [](Active& a) { a.pin = true; }});
  }
  auto none = [] {
    Active a;
    a.toolkit = a.driver = a.cc = a.recall = a.pin = false;
    return a;
  };
  auto check = [&](const std::vector<size_t>& subset) {
    Active a = none();
    for (size_t s : subset) {
      items[s].on(a);
    }
    return !solvable(in, compat, a);
  };
  Conflict c;
  std::vector<size_t> found;
  const size_t n = items.size();
  for (size_t i = 0; i < n && found.empty(); ++i) {
    if (check({i})) {
      found = {i};
    }
  }
  for (size_t i = 0; i < n && found.empty(); ++i) {
    for (size_t j = i + 1; j < n && found.empty(); ++j) {
      if (check({i, j})) {
        found = {i, j};
      }
    }
  }
  for (size_t i = 0; i < n && found.empty(); ++i) {
    for (size_t j = i + 1; j < n && found.empty(); ++j) {
      for (size_t k = j + 1; k < n && found.empty(); ++k) {
        if (check({i, j, k})) {
          found = {i, j, k};
        }
      }
    }
  }
  for (size_t s : found) {
    c.constraints.push_back(items[s].text);
  }
  if (found.size() == 1) {
    c.message = "no known release for " + in.platform + " meets " + c.constraints[0];
  } else if (!found.empty()) {
    c.message = util::join(c.constraints, " and ") + " cannot be met together";
  } else {
    for (const auto& it : items) {
      c.constraints.push_back(it.text);
    }
    c.message =
        "no known release for " + in.platform + " meets all of: " + util::join(c.constraints, "; ");
  }
  // Would another CUDA toolkit do? Say which.
  if (in.cuda_major) {
    for (int m : {12, 13, 11}) {
      if (m == *in.cuda_major) {
        continue;
      }
      RecommendInput other = in;
      other.cuda_major = m;
      if (solvable(other, compat, all_active(other))) {
        c.hint =
            "try --cuda " + std::to_string(m) + " with a CUDA " + std::to_string(m) + " toolkit";
        break;
      }
    }
  }
  return c;
}

} // namespace cudnnctl::doctor::detail
