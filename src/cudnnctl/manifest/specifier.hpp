// SPDX-License-Identifier: Apache-2.0
// Version specifiers as pip writes them (PEP 440 release segments only): `==2.4.1`, `>=2.3`,
// `~=2.4`, `!=2.5.*`, `==2.4.*`, comma-separated ranges (`>=2.3,<2.6`), a local label
// (`==2.3.1+cu118`), plus the legacy `NAME=VERSION` and `NAME@VERSION`. A specifier becomes a
// VersionSet, a union of intervals over dotted versions, so that the data's rows (also written
// as specifiers) and the user's request can be intersected (doctor/compat), and recall lists
// can name ranges (recall/). Pure: no I/O.
#pragma once

#include "core/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::manifest {

// --- Interface ---

// A release version as numbers; missing trailing components count as 0 ("2.4" == "2.4.0").
using VersionKey = std::vector<uint64_t>;

// "2.4.1" -> {2, 4, 1}; nullopt unless digits separated by single dots.
std::optional<VersionKey> parse_version_key(std::string_view text);
// -1, 0, 1 with zero padding.
int compare_keys(const VersionKey& a, const VersionKey& b);
std::string key_text(const VersionKey& v);

// A set of versions: sorted, disjoint intervals, each end open, closed or unbounded.
class VersionSet {
public:
  struct Bound {
    VersionKey v;
    bool inclusive = true;
  };
  struct Interval {
    std::optional<Bound> lo, hi; // nullopt: unbounded
  };

  static VersionSet all();
  static VersionSet none() { return VersionSet(); }
  // [lo, hi] with the given ends (nullopt: unbounded); empty intervals give none().
  static VersionSet range(std::optional<Bound> lo, std::optional<Bound> hi);

  [[nodiscard]] bool empty() const { return m_parts.empty(); }
  [[nodiscard]] bool contains(const VersionKey& v) const;
  [[nodiscard]] VersionSet intersect(const VersionSet& other) const;
  [[nodiscard]] VersionSet unite(const VersionSet& other) const;
  [[nodiscard]] VersionSet complement() const;
  [[nodiscard]] VersionSet minus(const VersionSet& other) const {
    return intersect(other.complement());
  }
  // ">=2.1,<2.13", "==2.4.1", "any version", "no version"; intervals joined by " or ".
  [[nodiscard]] std::string describe() const;
  const std::vector<Interval>& parts() const { return m_parts; }

private:
  static VersionSet normalized(std::vector<Interval> parts);
  std::vector<Interval> m_parts;
};

// The comma-separated clauses of a specifier ("==2.4.*", ">=2.3, <2.6") as a set. `local`
// receives the label of a `==V+label` clause. Errors: ErrorCode::usage naming the clause and
// what is accepted.
[[nodiscard]] Result<VersionSet> parse_specifier(std::string_view spec,
                                                 std::optional<std::string>* local = nullptr);

// One requirement as pip writes it: NAME[extras] followed by a specifier.
struct Requirement {
  std::string text;                 // as given, trimmed
  std::string name;                 // normalized: lower case, runs of "-_." as "-"
  std::vector<std::string> extras;  // normalized the same way
  std::string spec;                 // the specifier part ("==2.4.1", ">=2.3,<2.6")
  VersionSet versions;              // what the specifier admits
  std::optional<std::string> local; // "cu118" of "==2.3.1+cu118"
  std::optional<std::string> exact; // "2.4.1" when the specifier is one `==` clause
};

// Parses "torch==2.4.1", "tensorflow[and-cuda]>=2.16,<2.18", "jax ~= 0.6", "tf=2.15".
// Errors: ErrorCode::usage, one line saying what is wrong and giving the accepted forms.
[[nodiscard]] Result<Requirement> parse_requirement(std::string_view text);

// PEP 503 normalization: lower case, each run of '-', '_', '.' becomes one '-'.
std::string normalize_name(std::string_view name);

} // namespace cudnnctl::manifest
