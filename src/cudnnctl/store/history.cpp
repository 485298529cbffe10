// SPDX-License-Identifier: Apache-2.0
#include "store/history.hpp"

#include "util/fs.hpp"
#include "util/state_file.hpp"
#include "util/strings.hpp"

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::store {

using nlohmann::json;

Status append_history(const Layout& layout, json record) {
  if (!record.contains("time")) {
    record["time"] = util::utc_timestamp();
  }
  TRY(util::make_dirs(layout.state_dir()));
  bool created = !util::exists_nofollow(layout.history_file());
  TRY_ASSIGN(util::Fd fd,
             util::open_state_file(layout.history_file(), O_RDWR | O_APPEND | O_CREAT));
  // A previous append torn by a crash leaves a line without '\n': start on a fresh line.
  struct stat st;
  std::string line = record.dump() + "\n";
  if (::fstat(fd.get(), &st) == 0 && st.st_size > 0) {
    char last = '\n';
    if (::pread(fd.get(), &last, 1, st.st_size - 1) == 1 && last != '\n') {
      line = "\n" + line;
    }
  }
  TRY(util::write_all(fd.get(), line.data(), line.size(), layout.history_file().string()));
  if (::fsync(fd.get()) != 0) {
    return fail_errno("fsync " + layout.history_file().string(), errno);
  }
  TRY(fd.close());
  if (created) {
    TRY(util::fsync_dir(layout.state_dir()));
  }
  return {};
}

Result<std::vector<json>> read_history(const Layout& layout, std::vector<std::string>& warnings) {
  std::vector<json> out;
  if (!util::exists_nofollow(layout.history_file())) {
    return out;
  }
  TRY_ASSIGN(std::string text, util::read_state_file(layout.history_file(), 256u << 20));
  auto lines = util::split(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    if (util::trim(lines[i]).empty()) {
      continue;
    }
    json j = json::parse(lines[i], nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      warnings.push_back("history line " + std::to_string(i + 1) +
                         " is unreadable (an interrupted write); skipped");
      continue;
    }
    out.push_back(std::move(j));
  }
  return out;
}

} // namespace cudnnctl::store
