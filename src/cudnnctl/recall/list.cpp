// SPDX-License-Identifier: Apache-2.0
// One recall list's JSON -> Recall entries, and matching a build against them. Strict: the
// list is signed data, so a field this version does not know is an error, not a silent
// skip (a misspelt "expires" must not make a list live forever).
#include "manifest/specifier.hpp"
#include "recall/recall.hpp"
#include "util/enum_name.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

namespace cudnnctl::recall {

using nlohmann::json;

namespace {

std::vector<std::string> components(std::string_view v) {
  return util::split(v, '.');
}

bool numeric_version(std::string_view v, size_t min_parts, size_t max_parts) {
  auto parts = components(v);
  return parts.size() >= min_parts && parts.size() <= max_parts &&
         std::all_of(parts.begin(), parts.end(),
                     [](const std::string& p) { return util::parse_u64(p).has_value(); });
}

bool valid_date(const std::string& d) {
  if (d.size() != 10 || d[4] != '-' || d[7] != '-') {
    return false;
  }
  auto y = util::parse_u64(d.substr(0, 4));
  auto m = util::parse_u64(d.substr(5, 2));
  auto day = util::parse_u64(d.substr(8, 2));
  return y && m && day && *m >= 1 && *m <= 12 && *day >= 1 && *day <= 31;
}

// A recall's "version" written as a range, as pip writes one (">=9.5.0,<9.6", "==9.5.*",
// "~=9.5.0"): it starts with an operator.
bool is_range(std::string_view r) {
  return !r.empty() && std::string_view("<>=!~").find(r.front()) != std::string_view::npos;
}

// Whether recall version `r` covers build `v` (see RecallSet::find_recall).
bool covers(std::string_view r, std::string_view v) {
  if (is_range(r)) {
    auto set = manifest::parse_specifier(r); // checked when the list was read
    auto key = manifest::parse_version_key(v);
    return set && key && set->contains(*key);
  }
  auto rp = components(r);
  auto vp = components(v);
  auto numbers_equal = [](const std::string& a, const std::string& b) {
    return util::parse_u64(a) == util::parse_u64(b);
  };
  size_t n = std::min(rp.size(), vp.size());
  if (n < 3) {
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!numbers_equal(rp[i], vp[i])) {
      return false;
    }
  }
  // A 4-component recall and a 4-component build must agree on the build number (done
  // above); a 3-component side matches every build of the release.
  return true;
}

} // namespace

const char* state_name(ListState s) {
  static constexpr util::EnumName<ListState> k_names[] = {
      {ListState::valid, "valid"},
      {ListState::expired, "expired"},
      {ListState::unsigned_list, "unsigned"},
      {ListState::bad_signature, "bad-signature"},
      {ListState::no_keys, "no-keys"},
      {ListState::malformed, "malformed"}};
  return util::enum_name(s, k_names, "malformed");
}

const Recall* RecallSet::find_recall(std::string_view version, std::optional<int> cuda) const {
  for (const auto& r : m_recalls) {
    if (r.cuda && cuda && *r.cuda != *cuda) {
      continue;
    }
    if (covers(r.version, version)) {
      return &r;
    }
  }
  return nullptr;
}

Result<std::vector<Recall>> parse_recall_list(std::string_view text, const std::string& path,
                                              std::optional<std::string>* expires,
                                              uint64_t* serial) {
  auto bad = [&](const std::string& what) { return fail(ErrorCode::usage, path + ": " + what); };
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    return bad(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) {
    return bad("must be a JSON object {\"schema\": 1, \"recalls\": [...]}");
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "schema" && key != "recalls" && key != "expires" && key != "serial" &&
        key != "about") {
      return bad("unknown key \"" + key +
                 "\" (a list holds schema, expires, serial, about, recalls)");
    }
  }
  if (!j.contains("schema") || !j["schema"].is_number_integer() || j["schema"] != 1) {
    return bad("\"schema\" must be 1 (this cudnnctl reads recall lists of schema 1)");
  }
  if (j.contains("expires")) {
    if (!j["expires"].is_string() || !valid_date(j["expires"].get<std::string>())) {
      return bad("\"expires\" must be a date \"YYYY-MM-DD\" (UTC)");
    }
    if (expires) {
      *expires = j["expires"].get<std::string>();
    }
  }
  if (j.contains("serial")) {
    if (!j["serial"].is_number_unsigned()) {
      return bad("\"serial\" must be an integer >= 0 (raise it each time the list is signed)");
    }
    if (serial) {
      *serial = j["serial"].get<uint64_t>();
    }
  }
  if (!j.contains("recalls") || !j["recalls"].is_array()) {
    return bad("\"recalls\" must be a list");
  }
  std::vector<Recall> out;
  size_t i = 0;
  for (const auto& e : j["recalls"]) {
    std::string where = "recalls[" + std::to_string(i++) + "]: ";
    if (!e.is_object()) {
      return bad(where + "must be an object");
    }
    for (const auto& [key, value] : e.items()) {
      if (key != "version" && key != "cuda" && key != "reason" && key != "url") {
        return bad(where + "unknown key \"" + key +
                   "\" (an entry holds version, cuda, reason, url)");
      }
    }
    Recall r;
    const std::string forms = "\"version\" must be a release (\"9.10.0\"), a full version "
                              "(\"9.10.0.56\") or a range (\">=9.5.0,<9.6\", \"==9.5.*\")";
    if (!e.contains("version") || !e["version"].is_string()) {
      return bad(where + forms);
    }
    if (std::string v = e["version"].get<std::string>(); is_range(v)) {
      if (auto set = manifest::parse_specifier(v); !set) {
        return bad(where + forms + ": " + set.error().message);
      } else if (set->empty()) {
        return bad(where + "\"version\" " + v + " admits no version");
      }
    } else if (!numeric_version(v, 3, 4)) {
      return bad(where + forms);
    }
    r.version = e["version"].get<std::string>();
    if (e.contains("cuda")) {
      const json& c = e["cuda"];
      std::optional<uint64_t> major;
      if (c.is_string()) {
        major = util::parse_u64(c.get<std::string>());
      } else if (c.is_number_unsigned()) {
        major = c.get<uint64_t>();
      }
      if (!major || *major == 0 || *major > 99) {
        return bad(where + "\"cuda\" must be a CUDA major such as \"12\"");
      }
      r.cuda = static_cast<int>(*major);
    }
    if (!e.contains("reason") || !e["reason"].is_string() ||
        util::trim(e["reason"].get<std::string>()).empty()) {
      return bad(where + "\"reason\" must be a non-empty string");
    }
    r.reason = e["reason"].get<std::string>();
    if (e.contains("url")) {
      if (!e["url"].is_string()) {
        return bad(where + "\"url\" must be a string");
      }
      r.url = e["url"].get<std::string>();
    }
    r.list = path;
    out.push_back(std::move(r));
  }
  return out;
}

std::string describe(const Recall& r, const std::string& version, int cuda_major) {
  return "cuDNN " + version + " (CUDA " + std::to_string(cuda_major) +
         ") is recalled: " + r.reason + (r.url.empty() ? "" : " (" + r.url + ")") +
         " [recall list " + r.list + "]";
}

std::string today_utc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

} // namespace cudnnctl::recall
