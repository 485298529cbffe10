// SPDX-License-Identifier: Apache-2.0
// Internals shared by the recommend_*.cpp files (not part of the module's interface).
#pragma once

#include "doctor/recommend.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::doctor::detail {

struct Violation {
  std::string kind; // platform, cuda, framework, framework-cuda, toolkit, driver, cc, recall, pin
  std::string text;
};

// Which constraints apply; the conflict search switches them off one by one.
struct Active {
  bool toolkit = true, driver = true, cc = true, recall = true, pin = true;
  std::vector<size_t> needs; // indices into RecommendInput::frameworks
};
Active all_active(const RecommendInput& in);

std::vector<Violation> evaluate(const ReleaseRow& r, int cuda, const RecommendInput& in,
                                const Compat& compat, const Active& a);

// Every CUDA major `r` has a build for, on any platform, ascending.
std::vector<int> cudas_of(const ReleaseRow& r);

struct Pair {
  const ReleaseRow* release = nullptr;
  int cuda = 0;
};
std::vector<Pair> feasible(const RecommendInput& in, const Compat& compat, const Active& a);

// Candidates from `pairs`, one per archive, best first (workload, wheel pin, newest, CUDA
// variant, pinned label). `needs` are the frameworks they are meant to serve.
std::vector<Candidate> rank(const std::vector<Pair>& pairs, const RecommendInput& in,
                            const Compat& compat, const std::vector<size_t>& needs);

// A set answer: groups of frameworks (indices), each with its slot; nullopt when none.
struct SetAnswer {
  std::vector<std::vector<size_t>> groups;
  std::vector<Slot> slots;
};
std::optional<SetAnswer> solve_sets(const RecommendInput& in, const Compat& compat,
                                    const Active& a);
bool solvable(const RecommendInput& in, const Compat& compat, const Active& a);
// The smallest set of constraints that cannot be met together (when nothing fits).
Conflict explain_conflict(const RecommendInput& in, const Compat& compat);

// "cuDNN 8.x with minor >= 9", "cuDNN 9.x".
std::string rule_text(const std::string& cudnn, Check check);
// "CUDA 11 or 12".
std::string cuda_list(const std::vector<int>& cudas);

} // namespace cudnnctl::doctor::detail
