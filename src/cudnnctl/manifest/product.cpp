// SPDX-License-Identifier: Apache-2.0
// One product object of a redistrib manifest. Hazards handled here (numbers from
// reference/nvidia-redist.md section 3): per-object shape decision (1), the mixed shape (2),
// per-product shapes (3), non-package keys by name in any order (4), size as a strict decimal
// string (5), untrusted relative_path (6), label vs version (7), file names from
// relative_path (8).
#include "manifest/product.hpp"

#include "manifest/text.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace cudnnctl::manifest::detail {

namespace {

using json = nlohmann::json;

constexpr std::array<std::string_view, 4> k_package_fields = {"relative_path", "sha256", "md5",
                                                              "size"};
constexpr std::array<std::string_view, 5> k_product_fields = {"name", "license", "license_path",
                                                              "version", "cuda_variant"};

bool is_package_field(std::string_view key) {
  return std::find(k_package_fields.begin(), k_package_fields.end(), key) != k_package_fields.end();
}

bool is_product_field(std::string_view key) {
  return std::find(k_product_fields.begin(), k_product_fields.end(), key) != k_product_fields.end();
}

// "cuda12" -> 12; nullopt for any other key.
std::optional<int> variant_major(std::string_view key) {
  if (!key.starts_with("cuda")) {
    return std::nullopt;
  }
  return small_major(key.substr(4));
}

std::string a_type(const json& value) {
  return a_or_an(value.type_name());
}

bool is_hex(std::string_view s, size_t size) {
  return s.size() == size && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return s;
}

// Records an entry that cannot be used: in `invalid` (by platform), in `invalid_variants`
// when its CUDA major is known, and as a warning, so that nothing is dropped silently.
void add_invalid(Product& product, const ProductContext& ctx, const std::string& platform,
                 std::optional<int> major, const std::string& why) {
  std::string& slot = product.invalid[platform];
  if (!slot.empty()) {
    slot += "; ";
  }
  slot += why;
  if (major) {
    std::string& variant_slot = product.invalid_variants[platform][*major];
    variant_slot += variant_slot.empty() ? why : "; " + why;
  }
  ctx.warnings->push_back(std::string(ctx.key) + " " + platform + ": " + why + "; entry ignored");
}

// Whether cudaNN keys belong in an object: in a platform object, not inside a package.
enum class VariantKeys { allowed, unknown };

// Shape of a platform object with package fields: flat only, or flat beside cudaNN entries.
enum class Shape { flat, mixed };

// Warns about keys that are neither package fields nor allowed cudaNN entries: nothing in a
// platform object is skipped silently.
void warn_unknown_keys(const json& obj, const ProductContext& ctx, const std::string& where,
                       VariantKeys variants) {
  for (const auto& [key, value] : obj.items()) {
    bool variant = variants == VariantKeys::allowed && variant_major(key);
    if (!is_package_field(key) && !variant) {
      ctx.warnings->push_back(std::string(ctx.key) + " " + where + ": ignoring unknown key " +
                              quote(key));
    }
  }
}

// A package object's own fields (cudaNN keys beside them are the caller's business).
Result<Package> parse_package(const json& obj, std::string_view product,
                              std::string_view platform) {
  auto bad = [](std::string why) { return fail(ErrorCode::usage, std::move(why)); };
  Package pkg;
  auto path = obj.find("relative_path");
  if (path == obj.end()) {
    return bad("no relative_path");
  }
  if (!path->is_string()) {
    return bad("relative_path is " + a_type(*path) + ", not a string");
  }
  pkg.relative_path = path->get<std::string>();
  if (auto why = relative_path_problem(pkg.relative_path, product, platform)) {
    return bad("relative_path " + quote(pkg.relative_path) + " " + *why);
  }

  auto sha = obj.find("sha256");
  if (sha == obj.end()) {
    return bad("no sha256");
  }
  if (!sha->is_string()) {
    return bad("sha256 is " + a_type(*sha) + ", not a string");
  }
  if (!util::is_sha256_hex(sha->get_ref<const std::string&>())) {
    return bad("sha256 " + quote(sha->get_ref<const std::string&>()) + " is not 64 hex digits");
  }
  pkg.sha256 = lower(sha->get<std::string>());

  auto size = obj.find("size");
  if (size == obj.end()) {
    return bad("no size");
  }
  if (!size->is_string()) {
    return bad("size is " + a_type(*size) + ", not a decimal string");
  }
  const auto& size_text = size->get_ref<const std::string&>();
  auto bytes = util::parse_u64(size_text);
  if (!bytes) {
    bool digits = !size_text.empty() && std::all_of(size_text.begin(), size_text.end(),
                                                    [](char c) { return c >= '0' && c <= '9'; });
    return bad("size " + quote(size_text) +
               (digits ? " does not fit in 64 bits" : " is not a decimal number of bytes"));
  }
  if (*bytes == 0) {
    return bad("size is 0");
  }
  pkg.size = *bytes;

  if (auto md5 = obj.find("md5"); md5 != obj.end()) {
    if (!md5->is_string() || !is_hex(md5->get_ref<const std::string&>(), 32)) {
      return bad("md5 is not 32 hex digits");
    }
    pkg.md5 = lower(md5->get<std::string>());
  }
  return pkg;
}

// The flat package of a platform object: schema A, cudnn_samples "source", or the flat half
// of the mixed shape (Shape::mixed: cudaNN entries were filed beside it already).
void parse_flat(const json& obj, const std::string& platform, Shape shape, Product& product,
                const ProductContext& ctx) {
  const bool mixed = shape == Shape::mixed;
  auto pkg = parse_package(obj, ctx.key, platform);
  if (!pkg) {
    std::optional<int> major;
    if (auto path = obj.find("relative_path"); path != obj.end() && path->is_string()) {
      major = file_name_major(path->get_ref<const std::string&>());
    }
    add_invalid(product, ctx, platform, mixed ? std::nullopt : major, pkg.error().message);
    return;
  }
  std::optional<int> named = file_name_major(pkg->relative_path);
  if (named && ctx.release_major && *named != *ctx.release_major) {
    add_invalid(product, ctx, platform, named,
                "relative_path " + quote(pkg->relative_path) + " names CUDA " +
                    std::to_string(*named) + " but release_product says CUDA " +
                    std::to_string(*ctx.release_major));
    return;
  }
  std::optional<int> major = named ? named : ctx.release_major;
  if (!major) {
    if (ctx.key == "cudnn") {
      add_invalid(product, ctx, platform, std::nullopt,
                  "cannot tell the CUDA major of relative_path " + quote(pkg->relative_path));
      return;
    }
    major = 0; // not tied to a CUDA major, e.g. cudnn_samples "source"
  }
  if (mixed) {
    std::string what = "flat package " + quote(pkg->relative_path) + " beside cudaNN entries";
    auto filed = product.packages.find(platform);
    auto invalid = product.invalid_variants.find(platform);
    bool taken = (filed != product.packages.end() && filed->second.contains(*major)) ||
                 (invalid != product.invalid_variants.end() && invalid->second.contains(*major));
    if (taken) {
      std::string cuda = std::to_string(*major);
      add_invalid(product, ctx, platform, std::nullopt,
                  what + " (CUDA " + cuda + " by its file name) collides with the cuda" + cuda +
                      " entry");
      return;
    }
    ctx.warnings->push_back(std::string(ctx.key) + " " + platform + ": " + what +
                            "; filed under CUDA " + std::to_string(*major) + " from its file name");
  }
  product.packages[platform][*major] = std::move(*pkg);
}

// Hazard 1: decide per platform object whether it is one package or a cudaNN map (or both).
void parse_platform(const std::string& platform, const json& value, Product& product,
                    const ProductContext& ctx) {
  if (!is_plain_name(platform)) {
    add_invalid(product, ctx, printable(platform), std::nullopt,
                "platform key is not a plain name");
    return;
  }
  if (!value.is_object()) {
    add_invalid(product, ctx, platform, std::nullopt, "is " + a_type(value) + ", not an object");
    return;
  }
  bool flat = false;
  bool variants = false;
  for (const auto& [key, entry] : value.items()) {
    flat = flat || is_package_field(key);
    variants = variants || variant_major(key).has_value();
  }
  warn_unknown_keys(value, ctx, platform, VariantKeys::allowed);
  if (!flat && !variants) {
    add_invalid(product, ctx, platform, std::nullopt,
                "no package (neither relative_path nor cudaNN entries)");
    return;
  }
  for (const auto& [key, entry] : value.items()) {
    std::optional<int> major = variant_major(key);
    if (!major) {
      continue;
    }
    if (!entry.is_object()) {
      add_invalid(product, ctx, platform, major, key + " is " + a_type(entry) + ", not an object");
      continue;
    }
    warn_unknown_keys(entry, ctx, platform + "/" + key, VariantKeys::unknown);
    auto pkg = parse_package(entry, ctx.key, platform);
    if (!pkg) {
      add_invalid(product, ctx, platform, major, key + ": " + pkg.error().message);
      continue;
    }
    if (auto named = file_name_major(pkg->relative_path); named && *named != *major) {
      add_invalid(product, ctx, platform, major,
                  key + ": relative_path " + quote(pkg->relative_path) + " names CUDA " +
                      std::to_string(*named));
      continue;
    }
    const auto& listed = product.cuda_variants;
    if (!listed.empty() && std::find(listed.begin(), listed.end(), key.substr(4)) == listed.end()) {
      ctx.warnings->push_back(std::string(ctx.key) + " " + platform + ": " + key +
                              " is not in cuda_variant");
    }
    product.packages[platform][*major] = std::move(*pkg);
  }
  if (flat) {
    parse_flat(value, platform, variants ? Shape::mixed : Shape::flat, product, ctx);
  }
}

void parse_cuda_variant(const json& value, Product& product, const ProductContext& ctx) {
  if (!value.is_array()) {
    ctx.warnings->push_back(std::string(ctx.key) + ": cuda_variant is " + a_type(value) +
                            ", not a list; ignored");
    return;
  }
  for (const auto& item : value) {
    if (item.is_string() && small_major(item.get_ref<const std::string&>())) {
      product.cuda_variants.push_back(item.get<std::string>());
    } else {
      ctx.warnings->push_back(
          std::string(ctx.key) + ": ignoring cuda_variant item " +
          (item.is_string() ? quote(item.get_ref<const std::string&>()) : a_type(item)));
    }
  }
}

} // namespace

std::string version_problem(const Version& label, const Product& product) {
  const std::string& version = product.version;
  const auto& parsed = product.parsed_version;
  if (!parsed) {
    return "version " + quote(version) + " is not a version";
  }
  if (parsed->parts.size() != 4) {
    return "version " + quote(version) + " does not have 4 components";
  }
  if (label.parts.size() == 4 && label != *parsed) {
    return "version " + quote(version) + " differs from release label " + label.str();
  }
  if (!label.is_prefix_of(*parsed)) {
    return "version " + quote(version) + " does not start with release label " + label.str();
  }
  return {};
}

Result<Product> parse_product(const json& obj, const ProductContext& ctx) {
  Product product;
  const bool strict = ctx.key == "cudnn";
  for (std::string_view field : {"name", "license", "license_path"}) {
    auto it = obj.find(field);
    if (it == obj.end()) {
      continue;
    }
    if (!it->is_string()) {
      ctx.warnings->push_back(std::string(ctx.key) + ": " + std::string(field) + " is " +
                              a_type(*it) + ", not a string; ignored");
    } else if (field == "name") {
      product.name = it->get<std::string>();
    }
  }

  std::string problem;
  auto version = obj.find("version");
  if (version == obj.end()) {
    problem = "has no version";
  } else if (!version->is_string()) {
    problem = "version is " + a_type(*version) + ", not a string";
  } else {
    product.version = version->get<std::string>();
    if (auto parsed = Version::parse(product.version)) {
      product.parsed_version = *parsed;
    }
    problem = version_problem(ctx.label, product);
  }
  if (!problem.empty()) {
    if (strict) {
      return fail(ErrorCode::usage, std::string(ctx.key) + " " + problem);
    }
    ctx.warnings->push_back(std::string(ctx.key) + ": " + problem);
  }

  // Hazard 4: cuda_variant comes before or after the platforms; read it first, by key.
  if (auto variants = obj.find("cuda_variant"); variants != obj.end()) {
    parse_cuda_variant(*variants, product, ctx);
  }
  for (const auto& [key, value] : obj.items()) {
    if (!is_product_field(key)) {
      parse_platform(key, value, product, ctx);
    }
  }
  return product;
}

std::optional<std::string> relative_path_problem(std::string_view path, std::string_view product,
                                                 std::string_view platform) {
  if (path.empty()) {
    return "is empty";
  }
  if (path.front() == '/') {
    return "is absolute";
  }
  if (path.find('\\') != std::string_view::npos) {
    return "contains a backslash";
  }
  std::vector<std::string> parts = util::split(path, '/');
  for (const auto& part : parts) {
    if (part.empty()) {
      return "has an empty component";
    }
    if (part == "..") {
      return "has a \"..\" component";
    }
    if (part == ".") {
      return "has a \".\" component";
    }
  }
  for (const auto& part : parts) {
    if (part.size() > 255) {
      return "has a component longer than 255 bytes";
    }
    if (!is_plain_name(part, 255)) {
      return "has a component with characters outside [A-Za-z0-9._+~-]";
    }
  }
  if (parts.size() != 3 || parts[0] != product || parts[1] != platform) {
    return "is not a file directly under " + std::string(product) + "/" + std::string(platform) +
           "/";
  }
  return std::nullopt;
}

std::optional<int> file_name_major(std::string_view relative_path) {
  size_t slash = relative_path.rfind('/');
  std::string_view name =
      slash == std::string_view::npos ? relative_path : relative_path.substr(slash + 1);
  size_t at = name.rfind("_cuda");
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view rest = name.substr(at + 5);
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
    ++digits;
  }
  if (digits < rest.size() && rest[digits] != '.' && rest[digits] != '-') {
    return std::nullopt;
  }
  return small_major(rest.substr(0, digits));
}

std::optional<int> small_major(std::string_view digits) {
  if (digits.empty() || digits.size() > 3 || digits[0] == '0') {
    return std::nullopt;
  }
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    value = value * 10 + (c - '0');
  }
  return value;
}

} // namespace cudnnctl::manifest::detail
