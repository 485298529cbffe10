// SPDX-License-Identifier: Apache-2.0
#include "integrate/sonames.hpp"

#include "elf/elf.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <sys/stat.h>

namespace cudnnctl::integrate {

namespace {

struct Member {
  size_t index = 0;     // in libs
  dev_t dev = 0;        // of the file the name resolves to
  ino_t ino = 0;        //
  bool regular = false; // the entry's own path is a regular file (not a link in the entry)
};

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

} // namespace

int compare_lib_names(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      size_t i0 = i, j0 = j;
      while (i < a.size() && is_digit(a[i])) {
        ++i;
      }
      while (j < b.size() && is_digit(b[j])) {
        ++j;
      }
      auto x = a.substr(i0, i - i0), y = b.substr(j0, j - j0);
      while (x.size() > 1 && x.front() == '0') {
        x.remove_prefix(1);
      }
      while (y.size() > 1 && y.front() == '0') {
        y.remove_prefix(1);
      }
      if (x.size() != y.size()) {
        return x.size() < y.size() ? -1 : 1;
      }
      if (int c = x.compare(y); c != 0) {
        return c < 0 ? -1 : 1;
      }
      continue;
    }
    if (a[i] != b[j]) {
      return a[i] < b[j] ? -1 : 1;
    }
    ++i;
    ++j;
  }
  if (i < a.size()) {
    return 1;
  }
  return j < b.size() ? -1 : 0;
}

std::vector<LibName> settle_sonames(const std::filesystem::path& entry_dir,
                                    std::vector<LibName> libs) {
  std::map<std::string, std::vector<Member>> by_soname;
  for (size_t i = 0; i < libs.size(); ++i) {
    auto host = entry_dir / libs[i].file;
    struct stat st, lst;
    if (::stat(host.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        ::lstat(host.c_str(), &lst) != 0) {
      continue;
    }
    auto dyn = elf::read_dynamic(host);
    if (!dyn || !dyn->soname || dyn->soname->empty() ||
        dyn->soname->find('/') != std::string::npos) {
      continue;
    }
    by_soname[*dyn->soname].push_back({i, st.st_dev, st.st_ino, S_ISREG(lst.st_mode)});
  }
  std::vector<LibName> added;
  for (const auto& [soname, members] : by_soname) {
    bool one_file = std::all_of(members.begin(), members.end(), [&](const Member& m) {
      return m.dev == members.front().dev && m.ino == members.front().ino;
    });
    // ldconfig's choice: the highest name among the regular files (among all when the entry
    // holds the library only behind links).
    std::optional<Member> best;
    for (const auto& m : members) {
      if (!best || (m.regular && !best->regular) ||
          (m.regular == best->regular &&
           compare_lib_names(libs[m.index].name, libs[best->index].name) > 0)) {
        best = m;
      }
    }
    std::string file = libs[best->index].file;
    if (!one_file) {
      for (const auto& m : members) {
        libs[m.index].file = file;
      }
    }
    bool has_soname = std::any_of(members.begin(), members.end(),
                                  [&](const Member& m) { return libs[m.index].name == soname; });
    bool name_taken =
        std::any_of(libs.begin(), libs.end(), [&](const LibName& l) { return l.name == soname; });
    if (!has_soname && !name_taken) {
      added.push_back({soname, file});
    }
  }
  libs.insert(libs.end(), added.begin(), added.end());
  return libs;
}

} // namespace cudnnctl::integrate
