// SPDX-License-Identifier: Apache-2.0
// Top level of a redistrib manifest: input limits, JSON syntax, release_* fields, products.
// Product objects are parsed in product.cpp, selection is in select.cpp.
#include "manifest/manifest.hpp"

#include "manifest/product.hpp"
#include "manifest/text.hpp"
#include "manifest/version.hpp"

#include <nlohmann/json.hpp>
#include <set>

namespace cudnnctl::manifest {

namespace {

using json = nlohmann::json;

// Real manifests are about 8 KiB and 4 levels deep.
constexpr size_t k_max_manifest_size = 16u << 20;
constexpr size_t k_max_depth = 32;

// False when arrays/objects nest deeper than `limit` (brackets inside strings do not count).
// Checked before parsing so that no recursive code (parser, destructor) sees a deep document.
bool nesting_within(std::string_view bytes, size_t limit) {
  size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : bytes) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) {
        return false;
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return true;
}

// An exception text (which may quote part of the input) as one bounded line, without
// nlohmann's "[json.exception.parse_error.101] " prefix.
std::string one_line(std::string_view what) {
  if (what.starts_with("[json.exception.")) {
    if (size_t end = what.find("] "); end != std::string_view::npos) {
      what.remove_prefix(end + 2);
    }
  }
  constexpr size_t max = 240;
  std::string out;
  for (size_t i = 0; i < what.size() && i < max; ++i) {
    auto c = static_cast<unsigned char>(what[i]);
    if (c < 0x20 || c >= 0x7f) {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return what.size() > max ? out + "..." : out;
}

// Parses JSON, refusing duplicate keys (a second "cuda12" would otherwise silently replace
// the first). Error: the reason, without the "malformed manifest" prefix.
Result<json> parse_json(std::string_view bytes) {
  std::vector<std::set<std::string, std::less<>>> keys; // one set per open object/array
  std::string duplicate;
  auto callback = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
    case json::parse_event_t::object_start:
    case json::parse_event_t::array_start:
      keys.emplace_back();
      break;
    case json::parse_event_t::object_end:
    case json::parse_event_t::array_end:
      if (!keys.empty()) {
        keys.pop_back();
      }
      break;
    case json::parse_event_t::key:
      if (!keys.empty() && parsed.is_string() &&
          !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty()) {
        duplicate = parsed.get<std::string>();
      }
      break;
    default:
      break;
    }
    return true;
  };
  try {
    json doc = json::parse(bytes.begin(), bytes.end(), callback);
    if (!duplicate.empty()) {
      return fail(ErrorCode::usage, "duplicate key " + detail::quote(duplicate));
    }
    return doc;
  } catch (const json::exception& e) {
    return fail(ErrorCode::usage, one_line(e.what()));
  }
}

// "cudnn-v8-9-cuda-12" -> 12.
std::optional<int> release_product_major(std::string_view product) {
  size_t at = product.rfind("-cuda-");
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  return detail::small_major(product.substr(at + 6));
}

// The label in a "redistrib_<label>.json" file name at the end of `source`, if any.
std::optional<std::string_view> label_in_source(std::string_view source) {
  size_t slash = source.rfind('/');
  std::string_view name = slash == std::string_view::npos ? source : source.substr(slash + 1);
  constexpr std::string_view prefix = "redistrib_";
  constexpr std::string_view suffix = ".json";
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
      !name.ends_with(suffix)) {
    return std::nullopt;
  }
  return name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
}

Result<Version> parse_label(const json& doc, std::string_view source) {
  auto bad = [](std::string why) { return fail(ErrorCode::usage, std::move(why)); };
  auto it = doc.find("release_label");
  if (it == doc.end()) {
    return bad("no release_label");
  }
  if (!it->is_string()) {
    return bad("release_label is " + detail::a_or_an(it->type_name()) + ", not a string");
  }
  const auto& text = it->get_ref<const std::string&>();
  auto label = Version::parse(text);
  if (!label) {
    return bad("release_label " + detail::quote(text) + " is not a version");
  }
  if (label->parts.size() < 3) {
    return bad("release_label " + detail::quote(text) + " has fewer than 3 components");
  }
  // Hazard 7: release_label equals the label in the file name.
  if (auto named = label_in_source(source); named && *named != text) {
    return bad("release_label " + detail::quote(text) + " does not match the file name");
  }
  return label;
}

std::optional<std::string> optional_string(const json& doc, std::string_view key,
                                           std::vector<std::string>& warnings) {
  auto it = doc.find(key);
  if (it == doc.end()) {
    return std::nullopt;
  }
  if (!it->is_string()) {
    warnings.push_back(std::string(key) + " is " + detail::a_or_an(it->type_name()) +
                       ", not a string; ignored");
    return std::nullopt;
  }
  return it->get<std::string>();
}

} // namespace

Result<Manifest> parse_manifest(std::string_view bytes, std::string_view source) {
  auto malformed = [&](const std::string& what) {
    return fail(ErrorCode::usage, "malformed manifest " + std::string(source) + ": " + what);
  };
  if (bytes.empty()) {
    return malformed("empty input");
  }
  if (bytes.size() > k_max_manifest_size) {
    return malformed(std::to_string(bytes.size()) + " bytes, more than the " +
                     std::to_string(k_max_manifest_size >> 20) + " MiB a manifest may have");
  }
  if (!nesting_within(bytes, k_max_depth)) {
    return malformed("nested deeper than " + std::to_string(k_max_depth) + " levels");
  }
  auto doc = parse_json(bytes);
  if (!doc) {
    return malformed(doc.error().message);
  }
  if (!doc->is_object()) {
    return malformed("the top level is " + detail::a_or_an(doc->type_name()) + ", not an object");
  }

  Manifest manifest;
  auto label = parse_label(*doc, source);
  if (!label) {
    return malformed(label.error().message);
  }
  manifest.release_label = label->str();
  manifest.parsed_label = *label;
  manifest.release_date = optional_string(*doc, "release_date", manifest.warnings).value_or("");
  manifest.release_product =
      optional_string(*doc, "release_product", manifest.warnings).value_or("");

  detail::ProductContext ctx{.key = {},
                             .label = *label,
                             .release_major = release_product_major(manifest.release_product),
                             .warnings = &manifest.warnings};
  for (const auto& [key, value] : doc->items()) {
    if (key == "release_label" || key == "release_date" || key == "release_product") {
      continue;
    }
    if (!value.is_object()) {
      if (key == "cudnn") {
        return malformed("\"cudnn\" is " + detail::a_or_an(value.type_name()) + ", not an object");
      }
      manifest.warnings.push_back("ignoring top-level key " + detail::quote(key) + " (" +
                                  detail::a_or_an(value.type_name()) + ")");
      continue;
    }
    if (!detail::is_plain_name(key)) {
      manifest.warnings.push_back("ignoring product " + detail::quote(key) + ": not a plain name");
      continue;
    }
    ctx.key = key;
    auto product = detail::parse_product(value, ctx);
    if (!product) {
      return malformed(product.error().message);
    }
    manifest.products.emplace(key, std::move(*product));
  }
  if (!manifest.products.contains("cudnn")) {
    return malformed("no \"cudnn\" product");
  }
  return manifest;
}

} // namespace cudnnctl::manifest
