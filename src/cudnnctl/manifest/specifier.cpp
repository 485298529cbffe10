// SPDX-License-Identifier: Apache-2.0
#include "manifest/specifier.hpp"

#include "util/strings.hpp"

#include <algorithm>
#include <cctype>

namespace cudnnctl::manifest {

namespace {

using Bound = VersionSet::Bound;
using Interval = VersionSet::Interval;

// Lower ends: unbounded first; at equal values an inclusive end starts earlier.
int compare_lo(const std::optional<Bound>& a, const std::optional<Bound>& b) {
  if (!a || !b) {
    return !a && !b ? 0 : (!a ? -1 : 1);
  }
  if (int c = compare_keys(a->v, b->v); c != 0) {
    return c;
  }
  return a->inclusive == b->inclusive ? 0 : (a->inclusive ? -1 : 1);
}

// Upper ends: unbounded last; at equal values an inclusive end reaches further.
int compare_hi(const std::optional<Bound>& a, const std::optional<Bound>& b) {
  if (!a || !b) {
    return !a && !b ? 0 : (!a ? 1 : -1);
  }
  if (int c = compare_keys(a->v, b->v); c != 0) {
    return c;
  }
  return a->inclusive == b->inclusive ? 0 : (a->inclusive ? 1 : -1);
}

bool is_empty(const Interval& i) {
  if (!i.lo || !i.hi) {
    return false;
  }
  int c = compare_keys(i.lo->v, i.hi->v);
  return c > 0 || (c == 0 && !(i.lo->inclusive && i.hi->inclusive));
}

// Whether `a` (ending first) and `b` touch or overlap, so that they merge into one interval.
bool joins(const Interval& a, const Interval& b) {
  if (!a.hi || !b.lo) {
    return true;
  }
  int c = compare_keys(a.hi->v, b.lo->v);
  return c > 0 || (c == 0 && (a.hi->inclusive || b.lo->inclusive));
}

VersionKey bump(VersionKey v) {
  // ==2.4.* covers [2.4, 2.5): increment the last given component.
  v.back() += 1;
  return v;
}

std::string bound_text(const char* op, const Bound& b) {
  return std::string(op) + key_text(b.v);
}

Result<VersionSet> clause(std::string_view text, std::optional<std::string>* local) {
  std::string_view c = util::trim(text);
  static const char* const ops[] = {"===", "==", "!=", "~=", ">=", "<=", ">", "<"};
  std::string op;
  for (const char* o : ops) {
    if (c.starts_with(o)) {
      op = o;
      break;
    }
  }
  if (op.empty()) {
    return fail(ErrorCode::usage,
                "'" + std::string(c) + "' has no operator (use ==, !=, >=, <=, >, <, ~= or ===)");
  }
  std::string v(util::trim(c.substr(op.size())));
  if (v.empty()) {
    return fail(ErrorCode::usage, "no version after " + op + " in '" + std::string(c) + "'");
  }
  bool wildcard = v.ends_with(".*");
  if (wildcard) {
    if (op != "==" && op != "!=") {
      return fail(ErrorCode::usage, "'" + std::string(c) + "': .* only goes with == and !=");
    }
    v.resize(v.size() - 2);
  }
  if (auto plus = v.find('+'); plus != std::string::npos) {
    std::string label = v.substr(plus + 1);
    bool ok = !label.empty() && std::all_of(label.begin(), label.end(), [](unsigned char ch) {
      return std::isalnum(ch) || ch == '.';
    });
    if ((op != "==" && op != "===") || wildcard || !ok) {
      return fail(ErrorCode::usage, "'" + std::string(c) +
                                        "': a local label (+cu121) only goes with == and a "
                                        "full version (torch==2.3.1+cu121)");
    }
    if (local) {
      *local = normalize_name(label);
    }
    v.resize(plus);
  }
  auto key = parse_version_key(v);
  if (!key) {
    return fail(ErrorCode::usage, "version '" + v + "' in '" + std::string(c) +
                                      "' is not a release version: use digits and dots "
                                      "(2.4.1); pre-, dev- and post-releases are not in the data");
  }
  if (op == "~=" && key->size() < 2) {
    return fail(ErrorCode::usage,
                "'" + std::string(c) + "': ~= needs at least two components (~=" + v + ".0)");
  }
  Bound at{*key, true};
  if (op == "==" || op == "===") {
    return wildcard ? VersionSet::range(at, Bound{bump(*key), false}) : VersionSet::range(at, at);
  }
  if (op == "!=") {
    auto excluded =
        wildcard ? VersionSet::range(at, Bound{bump(*key), false}) : VersionSet::range(at, at);
    return excluded.complement();
  }
  if (op == "~=") {
    VersionKey prefix(key->begin(), key->end() - 1);
    return VersionSet::range(at, Bound{bump(prefix), false});
  }
  if (op == ">=") {
    return VersionSet::range(at, std::nullopt);
  }
  if (op == ">") {
    return VersionSet::range(Bound{*key, false}, std::nullopt);
  }
  if (op == "<=") {
    return VersionSet::range(std::nullopt, at);
  }
  return VersionSet::range(std::nullopt, Bound{*key, false}); // "<"
}

const char* const k_forms = "write NAME==VERSION, NAME>=VERSION, NAME~=VERSION, NAME!=VERSION or "
                            "a range like 'torch>=2.3,<2.6'";

} // namespace

std::optional<VersionKey> parse_version_key(std::string_view text) {
  VersionKey out;
  if (text.empty()) {
    return std::nullopt;
  }
  for (const auto& part : util::split(text, '.')) {
    auto n = util::parse_u64(part);
    if (!n || part.size() > 9) {
      return std::nullopt;
    }
    out.push_back(*n);
  }
  return out;
}

int compare_keys(const VersionKey& a, const VersionKey& b) {
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    uint64_t x = i < a.size() ? a[i] : 0;
    uint64_t y = i < b.size() ? b[i] : 0;
    if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  return 0;
}

std::string key_text(const VersionKey& v) {
  std::vector<std::string> parts;
  for (auto n : v) {
    parts.push_back(std::to_string(n));
  }
  return util::join(parts, ".");
}

VersionSet VersionSet::all() {
  VersionSet s;
  s.m_parts.push_back({});
  return s;
}

VersionSet VersionSet::range(std::optional<Bound> lo, std::optional<Bound> hi) {
  return normalized({Interval{std::move(lo), std::move(hi)}});
}

VersionSet VersionSet::normalized(std::vector<Interval> parts) {
  std::erase_if(parts, is_empty);
  // Sorted through indices: swapping Intervals makes GCC 12 warn (-Wmaybe-uninitialized) about
  // the std::optional members inside std::sort.
  std::vector<size_t> order(parts.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return compare_lo(parts[a].lo, parts[b].lo) < 0; });
  VersionSet out;
  for (size_t i : order) {
    Interval& p = parts[i];
    if (!out.m_parts.empty() && joins(out.m_parts.back(), p)) {
      auto& last = out.m_parts.back();
      if (compare_hi(p.hi, last.hi) > 0) {
        last.hi = p.hi;
      }
    } else {
      out.m_parts.push_back(std::move(p));
    }
  }
  return out;
}

bool VersionSet::contains(const VersionKey& v) const {
  Bound at{v, true};
  for (const auto& p : m_parts) {
    if (compare_lo(p.lo, at) <= 0 && compare_hi(at, p.hi) <= 0) {
      return true;
    }
  }
  return false;
}

VersionSet VersionSet::intersect(const VersionSet& other) const {
  std::vector<Interval> parts;
  for (const auto& a : m_parts) {
    for (const auto& b : other.m_parts) {
      Interval i{compare_lo(a.lo, b.lo) >= 0 ? a.lo : b.lo,
                 compare_hi(a.hi, b.hi) <= 0 ? a.hi : b.hi};
      parts.push_back(std::move(i));
    }
  }
  return normalized(std::move(parts));
}

VersionSet VersionSet::unite(const VersionSet& other) const {
  std::vector<Interval> parts = m_parts;
  parts.insert(parts.end(), other.m_parts.begin(), other.m_parts.end());
  return normalized(std::move(parts));
}

VersionSet VersionSet::complement() const {
  std::vector<Interval> gaps;
  std::optional<Bound> start; // unbounded below
  bool open_start = true;
  for (const auto& p : m_parts) {
    if (p.lo) {
      gaps.push_back({open_start ? std::nullopt : start, Bound{p.lo->v, !p.lo->inclusive}});
    }
    if (!p.hi) {
      return normalized(std::move(gaps));
    }
    start = Bound{p.hi->v, !p.hi->inclusive};
    open_start = false;
  }
  gaps.push_back({open_start ? std::nullopt : start, std::nullopt});
  return normalized(std::move(gaps));
}

std::string VersionSet::describe() const {
  if (m_parts.empty()) {
    return "no version";
  }
  std::vector<std::string> out;
  for (const auto& p : m_parts) {
    if (!p.lo && !p.hi) {
      return "any version";
    }
    if (p.lo && p.hi && p.lo->inclusive && p.hi->inclusive && compare_keys(p.lo->v, p.hi->v) == 0) {
      out.push_back("==" + key_text(p.lo->v));
      continue;
    }
    std::vector<std::string> ends;
    if (p.lo) {
      ends.push_back(bound_text(p.lo->inclusive ? ">=" : ">", *p.lo));
    }
    if (p.hi) {
      ends.push_back(bound_text(p.hi->inclusive ? "<=" : "<", *p.hi));
    }
    out.push_back(util::join(ends, ","));
  }
  return util::join(out, " or ");
}

Result<VersionSet> parse_specifier(std::string_view spec, std::optional<std::string>* local) {
  VersionSet set = VersionSet::all();
  if (util::trim(spec).empty()) {
    return fail(ErrorCode::usage, "empty version specifier");
  }
  for (const auto& part : util::split(spec, ',')) {
    TRY_ASSIGN(VersionSet c, clause(part, local));
    set = set.intersect(c);
  }
  return set;
}

std::string normalize_name(std::string_view name) {
  std::string out;
  bool sep = false;
  for (unsigned char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep && !out.empty()) {
      out.push_back('-');
    }
    sep = false;
    out.push_back(static_cast<char>(std::tolower(c)));
  }
  return out;
}

Result<Requirement> parse_requirement(std::string_view text) {
  Requirement r;
  r.text = std::string(util::trim(text));
  const std::string& s = r.text;
  auto bad = [&](const std::string& what) {
    return fail(ErrorCode::usage, "--framework '" + s + "': " + what + " (" + k_forms + ")");
  };
  size_t i = 0;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '-' ||
                          s[i] == '_' || s[i] == '.')) {
    ++i;
  }
  if (i == 0) {
    return bad("no framework name");
  }
  r.name = normalize_name(s.substr(0, i));
  size_t j = i;
  while (j < s.size() && s[j] == ' ') {
    ++j;
  }
  if (j < s.size() && s[j] == '[') {
    size_t close = s.find(']', j);
    if (close == std::string::npos) {
      return bad("'[' without ']'");
    }
    for (const auto& e : util::split(s.substr(j + 1, close - j - 1), ',')) {
      auto t = util::trim(e);
      if (!t.empty()) {
        r.extras.push_back(normalize_name(t));
      }
    }
    j = close + 1;
  }
  std::string rest(util::trim(std::string_view(s).substr(j)));
  if (rest.empty()) {
    return bad("no version");
  }
  // Legacy forms: NAME=VERSION and NAME@VERSION mean NAME==VERSION.
  if (rest[0] == '@' || (rest[0] == '=' && (rest.size() < 2 || rest[1] != '='))) {
    rest = "==" + std::string(util::trim(std::string_view(rest).substr(1)));
  }
  auto set = parse_specifier(rest, &r.local);
  if (!set) {
    return bad(set.error().message);
  }
  if (set->empty()) {
    return bad("no version satisfies '" + rest + "'");
  }
  r.spec = rest;
  r.versions = std::move(*set);
  if (rest.starts_with("==") && rest.find(',') == std::string::npos &&
      rest.find('*') == std::string::npos) {
    std::string v(util::trim(std::string_view(rest).substr(rest.starts_with("===") ? 3 : 2)));
    r.exact = v.substr(0, v.find('+'));
  }
  return r;
}

} // namespace cudnnctl::manifest
