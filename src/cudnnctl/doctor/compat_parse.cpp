// SPDX-License-Identifier: Apache-2.0
// manifests/compat.json, manifests/releases.json and compat.d overlays -> Compat. Strict: a
// row without its source, an unknown framework, a version that is not a dotted release or a
// specifier pip would not accept is an error naming the document, the row and the field.
#include "doctor/compat.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace cudnnctl::doctor {

using nlohmann::json;

namespace {

const char* const k_see = " (row format: docs/COMPAT.md)";

// Field access with errors that name where the field is ("builds[3].variants[0]").
struct Reader {
  const std::string& doc;
  std::string where;

  std::unexpected<Error> bad(const std::string& what) const {
    return fail(ErrorCode::usage, doc + ": " + where + ": " + what + k_see);
  }
  Result<std::string> str(const json& j, const char* key, bool required = true) const {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
      if (required) {
        return bad(std::string("\"") + key + "\" is missing");
      }
      return std::string();
    }
    if (!it->is_string()) {
      return bad(std::string("\"") + key + "\" must be a string");
    }
    if (required && it->get<std::string>().empty()) {
      return bad(std::string("\"") + key + "\" is empty");
    }
    return it->get<std::string>();
  }
  Result<std::vector<std::string>> strings(const json& j, const char* key) const {
    auto it = j.find(key);
    if (it == j.end()) {
      return std::vector<std::string>{};
    }
    if (!it->is_array() ||
        !std::all_of(it->begin(), it->end(), [](const json& e) { return e.is_string(); })) {
      return bad(std::string("\"") + key + "\" must be a list of strings");
    }
    return it->get<std::vector<std::string>>();
  }
  Status object(const json& j) const {
    if (!j.is_object()) {
      return bad("must be an object");
    }
    return {};
  }
};

bool dotted(const std::string& s) {
  return parse_version_key(s).has_value();
}

Result<Check> parse_check(const Reader& r, const std::string& s) {
  if (s == "minor") {
    return Check::minor;
  }
  if (s == "major") {
    return Check::major;
  }
  if (s == "optional") {
    return Check::optional;
  }
  return r.bad("\"check\" must be minor, major or optional, not \"" + s + "\"");
}

Result<FrameworkInfo> parse_framework(const json& j, const Reader& r, const std::string& origin) {
  TRY(r.object(j));
  FrameworkInfo f;
  TRY_ASSIGN(std::string name, r.str(j, "name"));
  f.name = normalize_name(name);
  TRY_ASSIGN(f.display, r.str(j, "display", false));
  if (f.display.empty()) {
    f.display = f.name;
  }
  TRY_ASSIGN(auto aliases, r.strings(j, "aliases"));
  for (const auto& a : aliases) {
    f.aliases.push_back(normalize_name(a));
  }
  TRY_ASSIGN(std::string check, r.str(j, "check"));
  TRY_ASSIGN(f.check, parse_check(r, check));
  TRY_ASSIGN(f.check_text, r.str(j, "check_text"));
  TRY_ASSIGN(f.check_source, r.str(j, "check_source"));
  TRY_ASSIGN(f.system_for, r.str(j, "system_for", false));
  if (auto b = j.find("bundles"); b != j.end()) {
    Reader br{r.doc, r.where + ".bundles"};
    TRY(br.object(*b));
    auto ex = b->find("extras");
    if (ex == b->end() || ex->is_null()) {
      f.bundle_extras = std::nullopt;
    } else {
      TRY_ASSIGN(auto extras, br.strings(*b, "extras"));
      std::vector<std::string> norm;
      for (const auto& e : extras) {
        norm.push_back(normalize_name(e));
      }
      f.bundle_extras = std::move(norm);
    }
    TRY_ASSIGN(f.bundle_text, br.str(*b, "text"));
    TRY_ASSIGN(f.bundle_source, br.str(*b, "source"));
  } else {
    f.bundle_extras = std::vector<std::string>{};
  }
  f.origin = origin;
  return f;
}

Result<BuildVariant> parse_variant(const json& j, const Reader& r) {
  TRY(r.object(j));
  BuildVariant v;
  TRY_ASSIGN(v.cuda, r.str(j, "cuda"));
  auto cuda = parse_version_key(v.cuda);
  if (!cuda || cuda->size() > 2 || (*cuda)[0] < 7 || (*cuda)[0] > 99) {
    return r.bad("\"cuda\" must be a CUDA version like \"12\" or \"12.1\", not \"" + v.cuda + "\"");
  }
  v.cuda_major = static_cast<int>((*cuda)[0]);
  TRY_ASSIGN(v.cudnn, r.str(j, "cudnn"));
  if (!dotted(v.cudnn) || util::split(v.cudnn, '.').size() > 4) {
    return r.bad("\"cudnn\" must be a dotted cuDNN version like \"9.1.0.70\", \"8.9\" or \"9\"");
  }
  TRY_ASSIGN(v.wheel, r.str(j, "wheel", false));
  v.wheel = normalize_name(v.wheel);
  TRY_ASSIGN(v.pip, r.str(j, "pip", false));
  if (auto p = j.find("pypi"); p != j.end()) {
    if (!p->is_boolean()) {
      return r.bad("\"pypi\" must be true or false");
    }
    v.pypi = p->get<bool>();
  }
  return v;
}

Result<BuildRow> parse_build(const json& j, Reader r, const Compat& c, const std::string& origin) {
  TRY(r.object(j));
  BuildRow row;
  TRY_ASSIGN(std::string fw, r.str(j, "framework"));
  const FrameworkInfo* f = c.framework_info(fw);
  if (!f) {
    std::vector<std::string> names;
    for (const auto& x : c.frameworks) {
      names.push_back(x.name);
    }
    return r.bad("unknown framework \"" + fw + "\" (known: " + util::join(names, ", ") +
                 "; a new one needs an entry in \"frameworks\")");
  }
  row.framework = f->name;
  TRY_ASSIGN(row.versions_text, r.str(j, "versions"));
  auto set = parse_specifier(row.versions_text);
  if (!set) {
    return r.bad("\"versions\": " + set.error().message);
  }
  if (set->empty()) {
    return r.bad("\"versions\": no version satisfies \"" + row.versions_text + "\"");
  }
  row.versions = *set;
  row.effective = *set;
  r.where += " (" + row.framework + " " + row.versions_text + ")";
  auto vs = j.find("variants");
  if (vs == j.end() || !vs->is_array() || vs->empty()) {
    return r.bad("\"variants\" must be a non-empty list of {\"cuda\", \"cudnn\", ...}");
  }
  for (size_t i = 0; i < vs->size(); ++i) {
    TRY_ASSIGN(auto v, parse_variant((*vs)[i], Reader{r.doc, r.where + ".variants[" +
                                                                 std::to_string(i) + "]"}));
    row.variants.push_back(std::move(v));
  }
  if (j.contains("check")) {
    TRY_ASSIGN(std::string check, r.str(j, "check"));
    TRY_ASSIGN(row.check, parse_check(r, check));
  }
  TRY_ASSIGN(row.note, r.str(j, "note", false));
  TRY_ASSIGN(row.source, r.str(j, "source"));
  row.origin = origin;
  return row;
}

// Later rows win: a row keeps only the versions no later row of its framework covers.
void recompute_effective(Compat& c) {
  std::map<std::string, VersionSet> later;
  for (auto it = c.builds.rbegin(); it != c.builds.rend(); ++it) {
    auto& taken = later.try_emplace(it->framework, VersionSet::none()).first->second;
    it->effective = it->versions.minus(taken);
    taken = taken.unite(it->versions);
  }
}

Status parse_rows(Compat& c, const json& j, const std::string& doc, const std::string& origin) {
  if (auto fws = j.find("frameworks"); fws != j.end()) {
    if (!fws->is_array()) {
      return fail(ErrorCode::usage, doc + ": \"frameworks\" must be a list" + k_see);
    }
    for (size_t i = 0; i < fws->size(); ++i) {
      TRY_ASSIGN(
          auto f,
          parse_framework((*fws)[i], Reader{doc, "frameworks[" + std::to_string(i) + "]"}, origin));
      auto same = std::find_if(c.frameworks.begin(), c.frameworks.end(),
                               [&](const FrameworkInfo& x) { return x.name == f.name; });
      if (same != c.frameworks.end()) {
        *same = std::move(f);
      } else {
        c.frameworks.push_back(std::move(f));
      }
    }
  }
  if (auto rows = j.find("builds"); rows != j.end()) {
    if (!rows->is_array()) {
      return fail(ErrorCode::usage, doc + ": \"builds\" must be a list" + k_see);
    }
    for (size_t i = 0; i < rows->size(); ++i) {
      TRY_ASSIGN(auto row, parse_build((*rows)[i], Reader{doc, "builds[" + std::to_string(i) + "]"},
                                       c, origin));
      c.builds.push_back(std::move(row));
    }
  }
  recompute_effective(c);
  return {};
}

Status parse_tables(Compat& c, const json& j) {
  for (const auto& r : j.at("driver_minimum")) {
    c.drivers.push_back({r.at("cuda_major").get<int>(), r.at("linux").get<std::string>(),
                         r.at("source").get<std::string>()});
  }
  for (const auto& r : j.at("workloads")) {
    WorkloadRow w{r.at("name").get<std::string>(),  r.at("aliases").get<std::vector<std::string>>(),
                  r.at("major").get<int>(),         r.at("label").get<std::string>(),
                  r.at("guide").get<std::string>(), {},
                  r.at("source").get<std::string>()};
    for (const auto& cl : r.at("claims")) {
      Claim claim{cl.at("claim").get<std::string>(), {}, std::nullopt};
      if (cl.contains("sizes")) {
        claim.sizes = cl.at("sizes").get<std::vector<std::string>>();
        claim.percent = cl.at("percent").get<double>();
        if (claim.sizes.size() != 2) {
          return fail(ErrorCode::usage, "compat.json: workload " + w.name +
                                            ": \"sizes\" must name two release labels");
        }
      }
      w.claims.push_back(std::move(claim));
    }
    c.workloads.push_back(std::move(w));
  }
  return {};
}

Status parse_releases(Compat& c, std::string_view releases_json) {
  json j = json::parse(releases_json);
  for (const auto& r : j.at("releases")) {
    ReleaseRow row{r.at("label").get<std::string>(),
                   r.at("version").get<std::string>(),
                   r.value("date", ""),
                   r.value("pinned", false),
                   {},
                   {}};
    for (const auto& [platform, cudas] : r.at("platforms").items()) {
      for (const auto& cuda : cudas) {
        row.platforms[platform].push_back(std::stoi(cuda.get<std::string>()));
      }
    }
    if (r.contains("archives")) {
      for (const auto& [platform, per_cuda] : r.at("archives").items()) {
        for (const auto& [cuda, a] : per_cuda.items()) {
          row.archives[platform][std::stoi(cuda)] = {a.at("size").get<uint64_t>(),
                                                     a.at("sha256").get<std::string>()};
        }
      }
    }
    c.releases.push_back(std::move(row));
  }
  std::stable_sort(c.releases.begin(), c.releases.end(), [](const auto& a, const auto& b) {
    return compare_versions(a.version, b.version) < 0;
  });
  return {};
}

} // namespace

Result<Compat> parse_compat(std::string_view compat_json, std::string_view releases_json) {
  Compat c;
  const std::string doc = "manifests/compat.json";
  try {
    json j = json::parse(compat_json);
    if (j.value("schema", 0) != 2) {
      return fail(ErrorCode::usage, doc + ": \"schema\" must be 2");
    }
    c.version_rule_source = j.at("version_rule").at("source").get<std::string>();
    if (!j.contains("frameworks") || !j.contains("builds")) {
      return fail(ErrorCode::usage, doc + ": \"frameworks\" and \"builds\" are required");
    }
    TRY(parse_rows(c, j, doc, "built-in"));
    TRY(parse_tables(c, j));
  } catch (const json::exception& e) {
    return fail(ErrorCode::usage, doc + ": " + e.what());
  }
  try {
    TRY(parse_releases(c, releases_json));
  } catch (const std::exception& e) {
    return fail(ErrorCode::usage, std::string("manifests/releases.json: ") + e.what());
  }
  return c;
}

Status apply_overlay(Compat& compat, std::string_view json_text, const std::string& source) {
  const std::string doc = "compat overlay " + source;
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    return fail(ErrorCode::usage,
                doc + ": not valid JSON (" + std::string(e.what()) + "); fix or remove the file");
  }
  if (!j.is_object()) {
    return fail(ErrorCode::usage, doc + ": must be a JSON object" + k_see);
  }
  if (!j.contains("schema") || !j.at("schema").is_number_integer() || j.at("schema") != 2) {
    return fail(ErrorCode::usage, doc + ": \"schema\" must be 2" + k_see);
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "schema" && key != "about" && key != "frameworks" && key != "builds") {
      return fail(ErrorCode::usage, doc + ": unknown key \"" + key +
                                        "\" (an overlay holds schema, about, frameworks, builds)" +
                                        k_see);
    }
  }
  Compat next = compat;
  try {
    TRY(parse_rows(next, j, doc, source));
  } catch (const json::exception& e) {
    return fail(ErrorCode::usage, doc + ": " + e.what() + k_see);
  }
  next.overlays.push_back(source);
  compat = std::move(next);
  return {};
}

} // namespace cudnnctl::doctor
