// SPDX-License-Identifier: Apache-2.0
#include "store/generations.hpp"

#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

namespace cudnnctl::store {

using nlohmann::json;

std::optional<int> parse_gen_number(std::string_view s) {
  auto n = util::parse_u64(s);
  if (!n || *n == 0 || *n > 1000000000ull || (s.size() > 1 && s[0] == '0')) {
    return std::nullopt;
  }
  return static_cast<int>(*n);
}

Result<std::vector<Generation>> list_generations(const Layout& layout,
                                                 std::vector<std::string>& warnings) {
  std::vector<Generation> out;
  std::error_code ec;
  if (!fs::is_directory(layout.generations_dir(), ec)) {
    return out;
  }
  for (const auto& de : fs::directory_iterator(layout.generations_dir(), ec)) {
    std::string name = de.path().filename().string();
    auto n = parse_gen_number(name);
    if (!n) {
      continue; // N.json, temporaries
    }
    auto target = util::read_link(de.path());
    if (!target) {
      warnings.push_back("generation " + name + " is not a symlink; ignored");
      continue;
    }
    std::string t = target->string();
    const std::string prefix = "../store/";
    if (!t.starts_with(prefix) || t.size() == prefix.size() ||
        t.find('/', prefix.size()) != std::string::npos) {
      warnings.push_back("generation " + name + " points at " + t + ", not a store entry; ignored");
      continue;
    }
    Generation g;
    g.number = *n;
    g.entry = t.substr(prefix.size());
    auto meta_text = util::read_file(layout.generation_meta(*n));
    if (meta_text) {
      json j = json::parse(*meta_text, nullptr, false);
      if (j.is_object()) {
        if (j.contains("parent") && j["parent"].is_number_integer()) {
          g.parent = j["parent"].get<int>();
        }
        g.created = j.value("created", "");
        g.command = j.value("command", "");
        g.slot = j.value("slot", "");
      }
    }
    out.push_back(std::move(g));
  }
  if (ec) {
    return fail_errno("cannot list " + layout.generations_dir().string(), ec.value());
  }
  std::sort(out.begin(), out.end(),
            [](const Generation& a, const Generation& b) { return a.number < b.number; });
  return out;
}

Result<std::optional<int>> current_generation(const Layout& layout) {
  if (!util::exists_nofollow(layout.current_link())) {
    return std::optional<int>();
  }
  struct stat st;
  if (::lstat(layout.current_link().c_str(), &st) == 0 && !S_ISLNK(st.st_mode)) {
    return fail(ErrorCode::environment, layout.current_link().string() +
                                            " is not a symlink to generations/<N>; run `cudnnctl "
                                            "recover` (it switches to an intact generation)");
  }
  TRY_ASSIGN(fs::path target, util::read_link(layout.current_link()));
  std::string t = target.string();
  const std::string prefix = "generations/";
  if (t.starts_with(prefix)) {
    if (auto n = parse_gen_number(t.substr(prefix.size()))) {
      return std::optional<int>(*n);
    }
  }
  return fail(ErrorCode::environment,
              layout.current_link().string() + " points at " + t +
                  ", not generations/<N>; run `cudnnctl recover` (it switches to an "
                  "intact generation)");
}

std::optional<int> rollback_target(const std::vector<Generation>& gens, int from) {
  auto exists = [&](int n) {
    return std::any_of(gens.begin(), gens.end(),
                       [&](const Generation& g) { return g.number == n; });
  };
  for (const auto& g : gens) {
    if (g.number == from && g.parent && *g.parent != from && exists(*g.parent)) {
      return g.parent;
    }
  }
  std::optional<int> best;
  for (const auto& g : gens) {
    if (g.number < from) {
      best = g.number;
    }
  }
  return best;
}

Status create_generation(const Layout& layout, const Generation& gen) {
  TRY(util::make_dirs(layout.generations_dir()));
  json meta = {{"generation", gen.number},
               {"entry", gen.entry},
               {"parent", gen.parent ? json(*gen.parent) : json(nullptr)},
               {"created", gen.created},
               {"command", gen.command}};
  if (!gen.slot.empty()) {
    meta["slot"] = gen.slot;
  }
  TRY(util::write_file_atomic(layout.generation_meta(gen.number), meta.dump(2) + "\n"));
  return util::replace_symlink(layout.generation_link(gen.number), "../store/" + gen.entry);
}

Status remove_generation(const Layout& layout, int n) {
  // Only what exists is unlinked: undoing a generation that was never created must succeed
  // on a read-only prefix too (unlink there fails with EROFS even for a missing name).
  if (util::exists_nofollow(layout.generation_link(n))) {
    TRY(util::remove_file(layout.generation_link(n)));
    TRY(util::fsync_dir(layout.generations_dir()));
  }
  if (util::exists_nofollow(layout.generation_meta(n))) {
    TRY(util::remove_file(layout.generation_meta(n)));
  }
  return {};
}

Status set_current(const Layout& layout, int n) {
  TRY(util::make_dirs(layout.prefix_dir()));
  return util::replace_symlink(layout.current_link(), "generations/" + std::to_string(n));
}

int max_generation(const std::vector<Generation>& gens, const Layout& layout) {
  int best = 0;
  for (const auto& g : gens) {
    best = std::max(best, g.number);
  }
  // Metadata of a generation whose link was removed still reserves its number, so numbers
  // are never reused while a record of them exists.
  std::error_code ec;
  if (fs::is_directory(layout.generations_dir(), ec)) {
    for (const auto& de : fs::directory_iterator(layout.generations_dir(), ec)) {
      std::string name = de.path().filename().string();
      if (name.ends_with(".json")) {
        if (auto n = parse_gen_number(name.substr(0, name.size() - 5))) {
          best = std::max(best, *n);
        }
      }
    }
  }
  return best;
}

} // namespace cudnnctl::store
