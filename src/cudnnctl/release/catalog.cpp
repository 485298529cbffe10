// SPDX-License-Identifier: Apache-2.0
#include "release/catalog.hpp"

#include "util/strings.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace cudnnctl::release {

namespace {

std::optional<manifest::Version> parsed(const std::string& text) {
  auto v = manifest::Version::parse(text);
  return v ? std::optional<manifest::Version>(*v) : std::nullopt;
}

} // namespace

KnownRelease known_release(std::string label, std::string version, std::string date, bool pinned) {
  KnownRelease r{std::move(label), std::move(version), std::move(date), pinned, {}, {}, {}};
  r.parsed_label = parsed(r.label);
  r.parsed_version = parsed(r.version);
  return r;
}

const KnownRelease* find_known(const Catalog& catalog, const manifest::Version& wanted) {
  // A label first (8.9.7.29 is a label of its own beside 8.9.7), then a full version.
  for (const auto& r : catalog) {
    if (r.parsed_label && *r.parsed_label == wanted) {
      return &r;
    }
  }
  for (const auto& r : catalog) {
    const auto& version = r.parsed_version;
    if (version && wanted.parts.size() == 4 && *version == wanted) {
      return &r;
    }
  }
  return nullptr;
}

std::vector<std::string> labels_with_build(const Catalog& catalog, const std::string& platform,
                                           int cuda) {
  std::vector<std::string> out;
  for (const auto& r : catalog) {
    auto p = r.archives.find(platform);
    if (p != r.archives.end() && p->second.contains(cuda)) {
      out.push_back(r.label);
    }
  }
  return out;
}

std::string newest_of(const std::vector<std::string>& labels, size_t most) {
  std::vector<std::string> shown;
  for (auto it = labels.rbegin(); it != labels.rend() && shown.size() < most; ++it) {
    shown.push_back(*it);
  }
  std::string out = util::join(shown, ", ");
  if (labels.size() > shown.size()) {
    out += " and " + std::to_string(labels.size() - shown.size()) + " older";
  }
  return out;
}

std::vector<std::string> minor_gaps(const Catalog& catalog) {
  std::map<int, std::set<int>> minors; // major -> the minors listed
  for (const auto& r : catalog) {
    if (const auto& v = r.parsed_label; v && v->parts.size() >= 2) {
      minors[static_cast<int>(v->parts[0])].insert(static_cast<int>(v->parts[1]));
    }
  }
  std::vector<std::string> out;
  for (const auto& [major, listed] : minors) {
    const std::string m = std::to_string(major) + ".";
    for (int lo = *listed.begin(); lo <= *listed.rbegin(); ++lo) {
      if (listed.count(lo)) {
        continue;
      }
      int hi = lo;
      while (!listed.count(hi + 1)) {
        ++hi;
      }
      out.push_back(m + std::to_string(lo) + (hi == lo ? "" : " to " + m + std::to_string(hi)));
      lo = hi;
    }
  }
  return out;
}

bool is_partial_version(const manifest::VersionArg& version_arg) {
  if (version_arg.latest()) {
    return true;
  }
  const auto& v = version_arg.version;
  return v && v->parts.size() < 3;
}

bool partial_matches(const manifest::VersionArg& version_arg,
                     const std::optional<manifest::Version>& label) {
  if (version_arg.latest()) {
    return true;
  }
  const auto& want = version_arg.version;
  return want && label && want->is_prefix_of(*label);
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> did_you_mean(const std::string& typed,
                                      const std::vector<std::string>& labels) {
  struct Scored {
    size_t score;
    std::string label;
  };
  std::vector<Scored> scored;
  auto major = [](const std::string& s) { return s.substr(0, s.find('.')); };
  for (const auto& l : labels) {
    size_t d = edit_distance(typed, l);
    if (d > std::max<size_t>(2, typed.size() / 3)) {
      continue;
    }
    scored.push_back({d * 2 + (major(l) == major(typed) ? 0 : 1), l});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const Scored& x, const Scored& y) { return x.score < y.score; });
  std::vector<std::string> out;
  for (const auto& s : scored) {
    if (out.size() == 3) {
      break;
    }
    out.push_back(s.label);
  }
  return out;
}

} // namespace cudnnctl::release
