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

namespace {

json ref_json(const std::optional<HistoryRef>& ref) {
  if (!ref) {
    return nullptr;
  }
  json j = {{"generation", ref->generation}};
  if (!ref->entry.empty()) {
    j["entry"] = ref->entry;
  }
  if (!ref->version.empty()) {
    j["version"] = ref->version;
    j["cuda"] = ref->cuda.value_or(0);
    j["platform"] = ref->platform;
  }
  return j;
}

std::optional<HistoryRef> ref_of(const json& rec, const char* key) {
  auto it = rec.find(key);
  if (it == rec.end() || !it->is_object()) {
    return std::nullopt;
  }
  auto g = it->find("generation");
  if (g == it->end() || !g->is_number_integer()) {
    return std::nullopt;
  }
  HistoryRef ref;
  ref.generation = g->get<int>();
  auto text = [&](const char* k) {
    auto f = it->find(k);
    return f != it->end() && f->is_string() ? f->get<std::string>() : std::string();
  };
  ref.entry = text("entry");
  ref.version = text("version");
  ref.platform = text("platform");
  if (auto c = it->find("cuda"); c != it->end() && c->is_number_integer()) {
    ref.cuda = c->get<int>();
  }
  return ref;
}

json record_json(const HistoryRecord& r) {
  json j = json::object();
  auto put = [&](const char* key, const std::string& value) {
    if (!value.empty()) {
      j[key] = value;
    }
  };
  put("time", r.time);
  j["command"] = r.command;
  j["result"] = r.result;
  if (r.names_switch) { // a transaction's record: these always
    j["txid"] = r.txid;
    j["argv"] = r.argv;
    j["from"] = ref_json(r.from);
    j["to"] = ref_json(r.to);
    j["started"] = r.started;
  } else {
    put("txid", r.txid);
    put("argv", r.argv);
    put("started", r.started);
  }
  put("message", r.message);
  if (!r.deleted_generations.empty()) {
    j["deleted_generations"] = r.deleted_generations;
  }
  if (!r.deleted_entries.empty()) {
    j["deleted_entries"] = r.deleted_entries;
  }
  put("entry", r.entry);
  put("slot", r.slot);
  if (r.primary) {
    j["primary"] = *r.primary;
  }
  for (const auto& [key, value] : r.notes) {
    j[key] = value;
  }
  return j;
}

HistoryRecord parse_record(const json& j, std::string line) {
  HistoryRecord r;
  auto text = [&](const char* k) {
    auto f = j.find(k);
    return f != j.end() && f->is_string() ? f->get<std::string>() : std::string();
  };
  r.time = text("time");
  r.txid = text("txid");
  r.command = text("command");
  r.argv = text("argv");
  r.result = text("result");
  r.started = text("started");
  r.message = text("message");
  r.names_switch = j.contains("from") || j.contains("to");
  r.from = ref_of(j, "from");
  r.to = ref_of(j, "to");
  if (auto f = j.find("deleted_generations"); f != j.end() && f->is_array()) {
    for (const auto& g : *f) {
      if (g.is_number_integer()) {
        r.deleted_generations.push_back(g.get<int>());
      }
    }
  }
  if (auto f = j.find("deleted_entries"); f != j.end() && f->is_array()) {
    for (const auto& e : *f) {
      if (e.is_string()) {
        r.deleted_entries.push_back(e.get<std::string>());
      }
    }
  }
  r.entry = text("entry");
  r.slot = text("slot");
  if (auto f = j.find("primary"); f != j.end() && f->is_boolean()) {
    r.primary = f->get<bool>();
  }
  r.line = std::move(line);
  return r;
}

} // namespace

std::vector<int> named_generations(const HistoryRecord& record) {
  std::vector<int> out;
  for (const auto& ref : {record.from, record.to}) {
    if (ref) {
      out.push_back(ref->generation);
    }
  }
  return out;
}

Status append_history(const Layout& layout, HistoryRecord rec) {
  if (rec.time.empty()) {
    rec.time = util::utc_timestamp();
  }
  const json record = record_json(rec);
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

Result<std::vector<HistoryRecord>> read_history(const Layout& layout,
                                                std::vector<std::string>& warnings) {
  std::vector<HistoryRecord> out;
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
    out.push_back(parse_record(j, std::string(util::trim(lines[i]))));
  }
  return out;
}

} // namespace cudnnctl::store
