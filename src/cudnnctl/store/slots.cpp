// SPDX-License-Identifier: Apache-2.0
#include "store/slots.hpp"

#include "store/generations.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace cudnnctl::store {

std::string slot_id(const std::string& version, int cuda_major) {
  return version.substr(0, version.find('.')) + "-cuda" + std::to_string(cuda_major);
}

std::string slot_id(const EntryInfo& entry) {
  return slot_id(entry.version, entry.cuda_major);
}

bool valid_slot_id(const std::string& slot) {
  auto dash = slot.find("-cuda");
  auto digits = [](std::string_view s) {
    return !s.empty() && s.size() < 6 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return dash != std::string::npos && digits(std::string_view(slot).substr(0, dash)) &&
         digits(std::string_view(slot).substr(dash + 5));
}

int slot_major(const std::string& slot) {
  if (!valid_slot_id(slot)) {
    return 0;
  }
  return static_cast<int>(util::parse_u64(slot.substr(0, slot.find('-'))).value_or(0));
}

fs::path slots_dir(const Layout& layout) {
  return layout.prefix_dir() / "slots";
}

fs::path slot_link(const Layout& layout, const std::string& slot) {
  return slots_dir(layout) / slot;
}

namespace {
std::optional<int> parse_target(const std::string& t) {
  const std::string prefix = "../generations/";
  if (!t.starts_with(prefix)) {
    return std::nullopt;
  }
  std::string n = t.substr(prefix.size());
  auto v = util::parse_u64(n);
  if (!v || *v == 0 || *v > 1000000000ull || (n.size() > 1 && n[0] == '0')) {
    return std::nullopt;
  }
  return static_cast<int>(*v);
}
} // namespace

Result<std::vector<SlotLink>> list_slot_links(const Layout& layout,
                                              std::vector<std::string>& warnings) {
  std::vector<SlotLink> out;
  std::error_code ec;
  if (!fs::is_directory(slots_dir(layout), ec)) {
    return out;
  }
  for (const auto& de : fs::directory_iterator(slots_dir(layout), ec)) {
    std::string name = de.path().filename().string();
    if (!valid_slot_id(name)) {
      continue; // temporaries
    }
    auto target = util::read_link(de.path());
    auto n = target ? parse_target(target->string()) : std::nullopt;
    if (!n) {
      warnings.push_back("slot pointer " + de.path().string() +
                         " is not a link to ../generations/<N>; ignored");
      continue;
    }
    out.push_back({name, *n});
  }
  if (ec) {
    return fail_errno("cannot list " + slots_dir(layout).string(), ec.value());
  }
  std::sort(out.begin(), out.end(),
            [](const SlotLink& a, const SlotLink& b) { return a.slot < b.slot; });
  return out;
}

Result<std::optional<int>> slot_generation(const Layout& layout, const std::string& slot) {
  if (slot.empty()) {
    return current_generation(layout);
  }
  fs::path link = slot_link(layout, slot);
  if (!util::exists_nofollow(link)) {
    return std::optional<int>();
  }
  TRY_ASSIGN(fs::path target, util::read_link(link));
  if (auto n = parse_target(target.string())) {
    return std::optional<int>(*n);
  }
  return fail(ErrorCode::environment, link.string() + " points at " + target.string() +
                                          ", not ../generations/<N>; run `cudnnctl recover`");
}

Status point_slot(const Layout& layout, const std::string& slot, std::optional<int> n) {
  fs::path link = slot.empty() ? layout.current_link() : slot_link(layout, slot);
  if (n) {
    if (slot.empty()) {
      return set_current(layout, *n);
    }
    TRY(util::make_dirs(slots_dir(layout)));
    return util::replace_symlink(link, "../generations/" + std::to_string(*n));
  }
  if (!util::exists_nofollow(link)) {
    return {};
  }
  TRY(util::remove_file(link));
  return util::fsync_dir(link.parent_path());
}

} // namespace cudnnctl::store
