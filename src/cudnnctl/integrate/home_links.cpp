// SPDX-License-Identifier: Apache-2.0
#include "integrate/home_links.hpp"

#include "host/dpkg_owned.hpp"
#include "integrate/homes.hpp"
#include "integrate/pkgconfig.hpp"
#include "integrate/slots.hpp"
#include "store/generations.hpp"
#include "store/slots.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::integrate {

namespace {

bool host_is_dir(const fs::path& host) {
  struct stat st;
  return ::stat(host.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void add_dir(std::vector<fs::path>& v, const fs::path& p) {
  if (!p.empty() && std::find(v.begin(), v.end(), p) == v.end()) {
    v.push_back(p);
  }
}

// The directories as this host names them (under --root): what a user can open.
std::vector<std::string> host_strings(const store::Layout& layout, const std::vector<fs::path>& v) {
  std::vector<std::string> out;
  for (const auto& p : v) {
    out.push_back(layout.host(p).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> as_strings(const std::vector<fs::path>& v) {
  std::vector<std::string> out;
  for (const auto& p : v) {
    out.push_back(p.string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The directories the step looks at: where links go (each home's include/ and lib dir, and
// every directory adopted originals came from) and every directory that held our links.
struct HomeTargets {
  struct One {
    std::vector<fs::path> inc, lib;
  };
  std::vector<One> homes; // parallel to the ManagedHome list
  std::vector<fs::path> dirs;
};

// The home an adopted original's directory `d` belongs to: the one whose directories hold
// it, else whose real directory is above it, else the first.
size_t home_of(const std::vector<ManagedHome>& homes, const fs::path& d) {
  for (size_t i = 0; i < homes.size(); ++i) {
    const auto& h = homes[i].dirs;
    for (const auto* v : {&h.include_dirs, &h.lib_dirs}) {
      if (std::find(v->begin(), v->end(), d) != v->end()) {
        return i;
      }
    }
  }
  for (size_t i = 0; i < homes.size(); ++i) {
    const auto& real = homes[i].dirs.real_home;
    const fs::path rel = d.lexically_relative(real);
    if (!real.empty() && !rel.empty() && *rel.begin() != "..") {
      return i;
    }
  }
  return 0;
}

HomeTargets home_targets(const store::Layout& layout, const std::vector<ManagedHome>& homes,
                         const HomeState& state) {
  HomeTargets t;
  for (const auto& h : homes) {
    HomeTargets::One one;
    add_dir(one.inc, h.dirs.include_dir);
    add_dir(one.lib, h.dirs.lib_dir);
    t.homes.push_back(std::move(one));
  }
  for (const auto& r : state.adopted) {
    fs::path d = fs::path(r.path).parent_path();
    if (!homes.empty() && host_is_dir(layout.host(d))) {
      auto& one = t.homes[home_of(homes, d)];
      add_dir(r.file.starts_with("include/") ? one.inc : one.lib, d);
    }
  }
  for (const auto& one : t.homes) {
    for (const auto& d : one.inc) {
      add_dir(t.dirs, d);
    }
    for (const auto& d : one.lib) {
      add_dir(t.dirs, d);
    }
  }
  for (const auto& d : state.dirs) {
    if (host_is_dir(layout.host(d))) {
      add_dir(t.dirs, d);
    }
  }
  return t;
}

// What each directory holds, classified: ours, adopted originals we may replace, foreign.
Result<std::vector<std::pair<fs::path, std::vector<Found>>>>
list_dirs(const store::Layout& layout, const std::vector<fs::path>& dirs, const HomeState& state,
          util::Notes& notes, bool sweep = true) {
  std::vector<std::string> warnings;
  TRY_ASSIGN(store::StoreView view, store::read_store(layout, warnings));
  for (const auto& w : warnings) {
    notes.warn(w);
  }
  std::optional<host::ForeignIndex> foreign;
  std::vector<std::pair<fs::path, std::vector<Found>>> listings;
  for (const auto& d : dirs) {
    if (sweep) {
      TRY(sweep_tmp(layout, d));
    }
    auto found = scan_dir(layout, d, Names::headers);
    auto libs = scan_dir(layout, d, Names::libraries);
    found.insert(found.end(), libs.begin(), libs.end());
    for (auto& f : found) {
      if (f.cls != Found::Class::unmanaged) {
        continue;
      }
      if (f.kind != Found::Kind::other && is_takeover(layout, view, f, state.adopted)) {
        f.cls = Found::Class::takeover;
        continue;
      }
      if (!foreign) {
        foreign = host::ForeignIndex::load(layout.root());
      }
      if (auto claim = foreign->claim(f.path)) {
        f.cls = Found::Class::foreign;
        f.why = claim->describe();
      }
    }
    listings.emplace_back(d, std::move(found));
  }
  return listings;
}

// A CUDA home on a read-only mount (a systemd unit with ProtectSystem=strict, a read-only
// /usr) must not stop a switch or a rollback: the loader drop-in is what processes use. Its
// links are left as they are, with a warning saying which build they still name.
void drop_unwritable(const store::Layout& layout, LinkPlan& plan, util::Notes& notes) {
  std::vector<fs::path> readonly;
  std::erase_if(plan.ops, [&](const LinkOp& op) {
    fs::path d = op.path.parent_path();
    if (std::find(readonly.begin(), readonly.end(), d) != readonly.end()) {
      return true;
    }
    if (op.kind == LinkOp::Kind::link && store_is_volatile_for(layout, layout.host(d))) {
      notes.warn("not linking " + d.string() + " to the store: the store is on tmpfs and " +
                 d.string() + " is not, so the links would dangle after a reboot");
      readonly.push_back(d);
      return true;
    }
    if (::access(layout.host(d).c_str(), W_OK) == 0) {
      return false;
    }
    notes.warn("cannot update the CUDA-home links in " + d.string() + " (" + std::strerror(errno) +
               "): they still name the previous build; run `cudnnctl " +
               "adopt` where it is writable to repair them (or set manage_cuda_home = false)");
    readonly.push_back(d);
    return true;
  });
}

// Records `dirs` in cuda-home.json when they differ from what it holds.
Status record_dirs(const store::Layout& layout, HomeState& state, std::vector<std::string> dirs) {
  if (dirs == state.dirs) {
    return {};
  }
  state.dirs = std::move(dirs);
  return write_home_state(layout, state);
}

// cudnn.pc for `info` (removed when nothing is active).
Status write_pc(const store::Layout& layout, const std::optional<store::EntryInfo>& info) {
  if (!info) {
    return remove_pkgconfig(layout);
  }
  TRY_ASSIGN(auto cur, store::current_generation(layout));
  return write_pkgconfig(layout, *info, cur.value_or(0));
}

} // namespace

bool is_takeover(const store::Layout& layout, const store::StoreView& view, const Found& f,
                 const std::vector<AdoptedRecord>& records) {
  const AdoptedRecord* rec = nullptr;
  for (const auto& r : records) {
    if (r.path == f.path.string()) {
      rec = &r;
    }
  }
  if (!rec || !view.entry(rec->entry)) {
    return false;
  }
  bool used = std::any_of(view.generations.begin(), view.generations.end(),
                          [&](const store::Generation& g) { return g.entry == rec->entry; });
  if (!used) {
    return false;
  }
  if (rec->kind == "symlink") {
    return f.kind == Found::Kind::symlink && f.target == rec->target;
  }
  if (f.kind != Found::Kind::file || f.size != rec->size) {
    return false;
  }
  auto digest = util::sha256_file(layout.host(f.path));
  return digest && *digest == rec->sha256;
}

namespace {

int major_of(const store::EntryInfo& e) {
  return store::slot_major(store::slot_id(e));
}

// The links of several active majors: everything of the highest major's entry, and the
// versioned library names ("libcudnn*.so.<N>...") of the others.
std::vector<Wanted> wanted_for_slots(const store::Layout& layout,
                                     const std::vector<store::EntryInfo>& infos,
                                     const std::vector<fs::path>& inc,
                                     const std::vector<fs::path>& lib) {
  int highest = 0;
  for (const auto& i : infos) {
    highest = std::max(highest, major_of(i));
  }
  std::vector<Wanted> out;
  bool took_highest = false;
  for (const auto& i : infos) {
    bool top = !took_highest && major_of(i) == highest;
    took_highest = took_highest || top;
    for (auto& w : wanted_links(layout, i, inc, lib)) {
      if (!top && w.name.find(".so.") == std::string::npos) {
        continue;
      }
      w.entry = i.name;
      out.push_back(std::move(w));
    }
  }
  return out;
}

// Every home's wanted links (its builds in its directories).
std::vector<Wanted> wanted_in_homes(const store::Layout& layout,
                                    const std::vector<ManagedHome>& homes, const HomeTargets& t) {
  std::vector<Wanted> out;
  for (size_t i = 0; i < homes.size(); ++i) {
    auto w = wanted_for_slots(layout, homes[i].builds, t.homes[i].inc, t.homes[i].lib);
    out.insert(out.end(), std::make_move_iterator(w.begin()), std::make_move_iterator(w.end()));
  }
  return out;
}

// "/usr/local/cuda-12.8 (CUDA 12): 9.1.0.70-cuda12-..., 8.9.7.29-cuda12-...: 3 made, 1 removed"
// for each home (several homes only: the ops' directories say which home they are in).
std::vector<std::string> per_home_lines(const std::vector<ManagedHome>& homes, const HomeTargets& t,
                                        const LinkPlan& plan) {
  std::vector<std::string> out;
  if (homes.size() < 2) {
    return out;
  }
  for (size_t i = 0; i < homes.size(); ++i) {
    const auto& h = homes[i];
    size_t made = 0, removed = 0;
    for (const auto& op : plan.ops) {
      fs::path d = op.path.parent_path();
      const auto& one = t.homes[i];
      if (std::find(one.inc.begin(), one.inc.end(), d) == one.inc.end() &&
          std::find(one.lib.begin(), one.lib.end(), d) == one.lib.end()) {
        continue;
      }
      (op.kind == LinkOp::Kind::link ? made : removed)++;
    }
    std::vector<std::string> names;
    for (const auto& b : h.builds) {
      names.push_back(b.name);
    }
    out.push_back(h.home + " (CUDA " + (h.cuda ? std::to_string(*h.cuda) : std::string("?")) +
                  "): " + (names.empty() ? std::string("no build") : util::join(names, ", ")) +
                  ": " + std::to_string(made) + " link(s) made or repointed, " +
                  std::to_string(removed) + " removed");
  }
  return out;
}

} // namespace

Status check_home_switch(const store::Layout& layout, const store::Config& config,
                         const std::optional<std::string>& entry) {
  if (!entry || !config.manage_cuda_home) {
    return {};
  }
  TRY_ASSIGN(HomeState state, read_home_state(layout));
  std::vector<fs::path> managed;
  for (const auto& d : state.dirs) {
    add_dir(managed, d);
  }
  for (const auto& r : state.adopted) {
    add_dir(managed, fs::path(r.path).parent_path());
  }
  if (managed.empty()) {
    return {};
  }
  TRY_ASSIGN(store::EntryInfo info, store::read_entry(layout, *entry));
  // Every home the switch puts `entry` into: the one home, or each home of its CUDA major.
  auto homes = managed_homes(layout, config, {info}, {info}, true);
  HomeTargets t = home_targets(layout, homes, state);
  util::Notes quiet(util::NoteStyle{.human = false});
  TRY_ASSIGN(auto listings, list_dirs(layout, t.dirs, state, quiet, false));
  auto plan = plan_links(layout, *entry, wanted_in_homes(layout, homes, t), listings);
  for (const auto& [dir, found] : plan.blocked) {
    if (std::find(managed.begin(), managed.end(), dir) == managed.end()) {
      continue;
    }
    bool headers = std::any_of(t.homes.begin(), t.homes.end(), [&](const HomeTargets::One& o) {
      return std::find(o.inc.begin(), o.inc.end(), dir) != o.inc.end();
    });
    return fail(ErrorCode::integrity,
                dir.string() + " holds cuDNN files cudnnctl does not manage (" + found +
                    "): switching to " + *entry + " would leave this CUDA-home directory " +
                    "without its " + (headers ? "headers" : "libraries") +
                    "; nothing was changed (run `cudnnctl adopt` to take them over, or remove "
                    "them, or set manage_cuda_home = false)");
  }
  return {};
}

Status link_cuda_home(const store::Layout& layout, const store::Config& config,
                      const std::optional<std::string>& entry, util::Notes& notes) {
  TRY_ASSIGN(auto entries, loader_entries(layout, config, entry));
  std::vector<std::string> others;
  for (const auto& e : entries) {
    if (!entry || e.name != *entry) {
      others.push_back(e.name);
    }
  }
  return link_cuda_home(layout, config, entry, others, notes);
}

Status link_cuda_home(const store::Layout& layout, const store::Config& config,
                      const std::optional<std::string>& entry,
                      const std::vector<std::string>& others, util::Notes& notes) {
  std::optional<store::EntryInfo> info;
  if (entry) {
    TRY_ASSIGN(info, store::read_entry(layout, *entry));
  }
  std::vector<store::EntryInfo> infos;
  if (info) {
    infos.push_back(*info);
  }
  for (const auto& o : others) {
    TRY_ASSIGN(store::EntryInfo oi, store::read_entry(layout, o));
    infos.push_back(std::move(oi));
  }
  TRY(write_pc(layout, info));
  if (!config.manage_cuda_home) {
    notes.info("CUDA-home links are off (manage_cuda_home = false)", 1);
    return {};
  }
  std::vector<store::EntryInfo> all;
  if (config.homes().size() > 1) {
    TRY_ASSIGN(all, active_entries(layout, entry));
  }
  auto homes = managed_homes(layout, config, infos, all, entry.has_value());
  TRY_ASSIGN(HomeState state, read_home_state(layout));
  HomeTargets t = home_targets(layout, homes, state);
  if (t.dirs.empty()) {
    if (entry) {
      notes.info("no CUDA home at " + layout.host(config.homes().front()).string() +
                     ": no CUDA-home links made",
                 1);
    }
    return {};
  }
  for (const auto& h : homes) {
    if (!h.warning.empty()) {
      notes.warn(h.warning);
    }
  }
  TRY_ASSIGN(auto listings, list_dirs(layout, t.dirs, state, notes));
  std::vector<Wanted> wanted = wanted_in_homes(layout, homes, t);
  auto plan = plan_links(layout, entry.value_or(""), wanted, listings);
  // Every directory that may hold our links is recorded before a link is made there, so a
  // later switch finds them even after a crash or a change of cuda_home.
  auto before = as_strings(plan.linked_dirs);
  for (const auto& d : state.dirs) {
    if (std::find(before.begin(), before.end(), d) == before.end()) {
      before.push_back(d);
    }
  }
  std::sort(before.begin(), before.end());
  TRY(record_dirs(layout, state, before));
  drop_unwritable(layout, plan, notes);
  TRY(apply_links(layout, plan));
  for (const auto& w : plan.warnings) {
    notes.warn(w);
  }
  size_t linked = 0, removed = 0;
  for (const auto& op : plan.ops) {
    (op.kind == LinkOp::Kind::link ? linked : removed)++;
  }
  if (linked || removed) {
    // What the homes name: the primary (or "-") and the other majors' picks, or with several
    // homes every home's builds.
    std::string first = entry.value_or("-");
    std::vector<std::string> rest = others;
    if (homes.size() > 1) {
      std::vector<std::string> named;
      for (const auto& h : homes) {
        for (const auto& b : h.builds) {
          if (std::find(named.begin(), named.end(), b.name) == named.end()) {
            named.push_back(b.name);
          }
        }
      }
      first = named.empty() ? "-" : named.front();
      rest.assign(named.begin() + (named.empty() ? 0 : 1), named.end());
    }
    notes.action("CUDA home: " + std::to_string(linked) + " link(s) to " + first +
                     (rest.empty() ? std::string() : " and " + util::join(rest, ", ")) + " made, " +
                     std::to_string(removed) + " removed in " +
                     util::join(host_strings(layout, t.dirs), ", "),
                 per_home_lines(homes, t, plan));
  }
  return record_dirs(layout, state, as_strings(plan.linked_dirs));
}

Result<std::optional<HomePreview>> preview_cuda_home(const store::Layout& layout,
                                                     const store::Config& config,
                                                     const std::string& entry, bool alongside) {
  if (!config.manage_cuda_home) {
    return std::nullopt;
  }
  TRY_ASSIGN(HomeState state, read_home_state(layout));
  const bool several = config.homes().size() > 1;
  const bool exists = util::exists_nofollow(layout.entry_dir(entry));
  std::vector<ManagedHome> homes;
  if (several && exists) {
    // What is active after the switch: `entry` replaces the primary's build, or (alongside,
    // into another slot than the primary's) the build of its own slot.
    TRY_ASSIGN(store::EntryInfo info, store::read_entry(layout, entry));
    TRY_ASSIGN(auto cur, store::current_generation(layout));
    std::optional<std::string> primary;
    if (cur) {
      std::vector<std::string> w;
      TRY_ASSIGN(auto gens, store::list_generations(layout, w));
      for (const auto& g : gens) {
        if (g.number == *cur) {
          primary = g.entry;
        }
      }
    }
    TRY_ASSIGN(auto all, active_entries(layout, primary));
    const std::string slot = store::slot_id(info);
    const bool slot_switch =
        alongside && primary && !all.empty() && store::slot_id(all.front()) != slot;
    if (slot_switch) {
      std::erase_if(all, [&](const store::EntryInfo& e) { return store::slot_id(e) == slot; });
      all.push_back(info);
    } else if (primary && !all.empty()) {
      all.front() = info;
    } else {
      all.insert(all.begin(), info);
    }
    homes = managed_homes(layout, config, {}, all, true);
  } else {
    homes = managed_homes(layout, config, {}, {}, false);
  }
  HomeTargets t = home_targets(layout, homes, state);
  if (t.dirs.empty()) {
    return std::nullopt;
  }
  HomePreview p;
  p.dirs = host_strings(layout, t.dirs);
  for (const auto& h : homes) {
    if (!h.warning.empty()) {
      p.warnings.push_back(h.warning);
    }
  }
  if (!exists) {
    return p; // a new entry: which names it offers is known once it is extracted
  }
  std::vector<Wanted> wanted;
  if (!several) {
    TRY_ASSIGN(store::EntryInfo info, store::read_entry(layout, entry));
    wanted = wanted_links(layout, info, t.homes.front().inc, t.homes.front().lib);
  } else {
    wanted = wanted_in_homes(layout, homes, t);
  }
  util::Notes quiet(util::NoteStyle{.human = false});
  TRY_ASSIGN(auto listings, list_dirs(layout, t.dirs, state, quiet, false));
  auto plan = plan_links(layout, entry, wanted, listings);
  p.counted = true;
  p.homes = per_home_lines(homes, t, plan);
  for (const auto& op : plan.ops) {
    if (op.kind == LinkOp::Kind::link) {
      p.linked++;
      p.ops.push_back(op.path.string() + " -> " + op.target);
    } else {
      p.removed++;
      p.ops.push_back("remove " + op.path.string());
    }
  }
  return p;
}

} // namespace cudnnctl::integrate
