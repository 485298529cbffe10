// SPDX-License-Identifier: Apache-2.0
// The backup format: metadata, writing, verification, extraction.
#include "store/backup.hpp"

#include "archive/checks.hpp"
#include "archive/dest_tree.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <fcntl.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::store {

using nlohmann::json;

namespace {

constexpr size_t k_max_meta = 16u << 20;

std::unexpected<Error> bad(const std::string& file, const std::string& why) {
  return fail(ErrorCode::integrity, "backup " + file + ": " + why);
}

// Checks a store path from a backup: relative, no "..", and its symlink target (when any)
// stays inside the entry.
std::optional<std::string> path_problem(const BackupFile& f) {
  if (f.path.empty()) {
    return std::nullopt;
  }
  if (auto why = archive::name_problem(f.path)) {
    return "store path " + archive::in_quotes(f.path) + ": " + *why;
  }
  if (f.kind == "symlink") {
    auto parts = archive::split_components(f.path);
    parts.pop_back();
    const std::string& t = f.entry_target.empty() ? f.target : f.entry_target;
    if (auto why = archive::symlink_target_problem(parts, t)) {
      return "link " + archive::in_quotes(f.path) + " -> " + archive::in_quotes(t) + ": " + *why;
    }
  }
  return std::nullopt;
}

struct Expected {
  BackupMeta meta;
  std::map<std::string, const BackupFile*> by_member;
};

// Reads and cross-checks the two metadata members at the start of the stream.
Result<BackupMeta> read_meta(archive::BackupReader& r, const std::string& file,
                             std::string* sums_out) {
  std::string meta_text, sums_text;
  for (const char* want : {k_backup_meta, k_backup_sums}) {
    TRY_ASSIGN(auto m, r.next());
    if (!m || m->name != want || m->kind != archive::Member::Kind::file || m->size > k_max_meta) {
      return bad(file, std::string("not a cudnnctl backup (expected ") + want + " first)");
    }
    std::string& text = std::string(want) == k_backup_meta ? meta_text : sums_text;
    auto read = r.read_data([&](const char* d, size_t n) -> Status {
      if (text.size() + n > k_max_meta) {
        return bad(file, std::string(want) + " is too large");
      }
      text.append(d, n);
      return {};
    });
    if (!read) {
      return fail(read.error());
    }
  }
  auto meta = parse_backup_meta(meta_text);
  if (!meta) {
    Error e = meta.error();
    e.message = "backup " + file + ": " + e.message;
    return fail(e);
  }
  if (sums_text != backup_sums(*meta)) {
    return bad(file, std::string(k_backup_sums) + " does not match " + k_backup_meta);
  }
  if (sums_out) {
    *sums_out = sums_text;
  }
  return meta;
}

// A backup may not unpack to more than 32 times its own size (64 MiB at least): real libraries
// compress a few times at most, while a few KB of zstd can declare a GiB of zeros. Checked on
// the sizes backup.json declares (every member's size must equal its record) before any data
// is read (issue 34: a 130 KB backup wrote 1 GiB into the store).
Status check_expansion(const std::string& file, const BackupMeta& meta) {
  struct stat st;
  if (::stat(file.c_str(), &st) != 0) {
    return fail_errno("cannot examine " + file, errno);
  }
  const uint64_t cap = std::max<uint64_t>(uint64_t{64} << 20, uint64_t(st.st_size) * 32);
  uint64_t total = 0;
  for (const auto& f : meta.files) {
    total += f.kind == "file" ? f.size : 0;
    if (total > cap) {
      return bad(file, "its files add up to more than " + std::to_string(cap) +
                           " bytes, 32 times the backup's size (" + std::to_string(st.st_size) +
                           " bytes): not a backup cudnnctl wrote");
    }
  }
  return {};
}

} // namespace

BackupMeta new_backup_meta(std::string kind, const EntryInfo& e) {
  return BackupMeta{.kind = std::move(kind),
                    .created = util::utc_timestamp(),
                    .version = e.version,
                    .parsed_version = e.parsed_version,
                    .label = e.label,
                    .cuda = e.cuda_major,
                    .platform = e.platform,
                    .components = e.components,
                    .source_entry = e.name};
}

json backup_meta_json(const BackupMeta& m) {
  json files = json::array();
  for (const auto& f : m.files) {
    json j = {{"member", f.member}, {"path", f.path}, {"kind", f.kind}, {"mode", f.mode},
              {"mtime", f.mtime},   {"uid", f.uid},   {"gid", f.gid}};
    if (f.kind == "file") {
      j["size"] = f.size;
      j["sha256"] = f.sha256;
    } else if (f.kind == "symlink") {
      j["target"] = f.target;
      if (!f.entry_target.empty() && f.entry_target != f.target) {
        j["entry_target"] = f.entry_target;
      }
    }
    if (!f.original.empty()) {
      j["original"] = f.original;
    }
    files.push_back(std::move(j));
  }
  json j = {{"format", 1},
            {"kind", m.kind},
            {"created", m.created},
            {"version", m.version},
            {"label", m.label.empty() ? m.version : m.label}, // as a missing label reads
            {"cuda", m.cuda},
            {"platform", m.platform},
            {"components", m.components},
            {"source_entry", m.source_entry},
            {"source_generation", m.source_generation ? json(*m.source_generation) : json()},
            {"files", std::move(files)}};
  if (!m.cuda_home.empty()) {
    j["cuda_home"] = m.cuda_home;
  }
  return j;
}

Result<BackupMeta> parse_backup_meta(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", 0) != 1) {
    return fail(ErrorCode::integrity, std::string(k_backup_meta) + " is not a format-1 object");
  }
  BackupMeta m;
  try {
    m.kind = j.at("kind").get<std::string>();
    m.created = j.value("created", "");
    m.version = j.at("version").get<std::string>();
    m.parsed_version = manifest::Version::parse(m.version);
    m.label = j.value("label", m.version);
    m.cuda = j.at("cuda").get<int>();
    m.platform = j.at("platform").get<std::string>();
    m.components = j.value("components", std::vector<std::string>{});
    m.source_entry = j.value("source_entry", "");
    if (j.contains("source_generation") && j["source_generation"].is_number_integer()) {
      m.source_generation = j["source_generation"].get<int>();
    }
    m.cuda_home = j.value("cuda_home", "");
    for (const auto& jf : j.at("files")) {
      BackupFile f;
      f.member = jf.at("member").get<std::string>();
      f.path = jf.value("path", "");
      f.kind = jf.at("kind").get<std::string>();
      f.mode = jf.value("mode", 0u);
      f.mtime = jf.value("mtime", int64_t{0});
      f.uid = jf.value("uid", 0u);
      f.gid = jf.value("gid", 0u);
      f.size = jf.value("size", 0ull);
      f.sha256 = jf.value("sha256", "");
      f.target = jf.value("target", "");
      f.entry_target = jf.value("entry_target", "");
      f.original = jf.value("original", "");
      m.files.push_back(std::move(f));
    }
  } catch (const json::exception& e) {
    return fail(ErrorCode::integrity, std::string(k_backup_meta) + ": " + e.what());
  }
  auto invalid = [](const std::string& why) {
    return fail(ErrorCode::integrity, std::string(k_backup_meta) + ": " + why);
  };
  if (m.kind != "adopt" && m.kind != "generation") {
    return invalid("unknown kind " + archive::in_quotes(m.kind));
  }
  auto safe_word = [](const std::string& s) {
    return !s.empty() && s.size() < 64 &&
           s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._-") == std::string::npos &&
           s[0] != '.';
  };
  if (!safe_word(m.version) || !safe_word(m.platform) || m.cuda < 0 || m.cuda > 99) {
    return invalid("invalid version, platform or CUDA major");
  }
  // The label names module files (modulefiles/cudnn/LABEL-cudaN) and lands in Tcl and Lua
  // text: a bracket, quote or slash in it would run code or write outside the prefix (issue 34,
  // F3).
  if (!safe_word(m.label)) {
    return invalid("invalid label " + archive::in_quotes(m.label) +
                   " (letters, digits, '.', '_' and '-' only, as a release label)");
  }
  for (const auto& c : m.components) {
    if (c != "headers" && c != "runtime" && c != "static") {
      return invalid("unknown component " + archive::in_quotes(c));
    }
  }
  std::map<std::string, int> members, paths;
  for (const auto& f : m.files) {
    if (f.kind != "file" && f.kind != "symlink" && f.kind != "dir") {
      return invalid("unknown kind of " + archive::in_quotes(f.member));
    }
    if (auto why = archive::name_problem(f.member)) {
      return invalid("member " + archive::in_quotes(f.member) + ": " + *why);
    }
    if (f.member.starts_with(".cudnnctl-backup")) {
      return invalid("data member " + archive::in_quotes(f.member) + " in the metadata folder");
    }
    if (f.kind == "file" && !util::is_sha256_hex(f.sha256)) {
      return invalid("no sha256 for " + archive::in_quotes(f.member));
    }
    if (f.kind == "symlink" && f.target.empty()) {
      return invalid("no target for " + archive::in_quotes(f.member));
    }
    if (auto why = path_problem(f)) {
      return invalid(*why);
    }
    if (++members[f.member] > 1) {
      return invalid("member " + archive::in_quotes(f.member) + " listed twice");
    }
    if (!f.path.empty() && f.kind != "dir" && ++paths[f.path] > 1) {
      return invalid("store path " + archive::in_quotes(f.path) + " listed twice");
    }
  }
  return m;
}

std::string backup_sums(const BackupMeta& meta) {
  std::string s;
  for (const auto& f : meta.files) {
    if (f.kind == "file") {
      s += f.sha256 + "  " + f.member + "\n";
    }
  }
  return s;
}

Status write_backup(const fs::path& out, const BackupMeta& meta, archive::Compression c) {
  TRY_ASSIGN(util::AtomicFile file, util::AtomicFile::create(out, 0644));
  std::string digest;
  {
    TRY_ASSIGN(archive::BackupWriter w, archive::BackupWriter::open(file.fd(), c));
    archive::MemberMeta mm{0644, static_cast<int64_t>(::time(nullptr)), 0, 0};
    TRY(w.add_bytes(k_backup_meta, backup_meta_json(meta).dump(1) + "\n", mm));
    TRY(w.add_bytes(k_backup_sums, backup_sums(meta), mm));
    for (const auto& f : meta.files) {
      archive::MemberMeta fm{f.mode, f.mtime, f.uid, f.gid};
      if (f.kind == "file") {
        TRY_ASSIGN(auto got, w.add_file(f.member, f.source, fm, &f.stamp));
        if (got && *got != f.sha256) {
          return fail(ErrorCode::environment,
                      f.source.string() + " changed while it was backed up (sha256 " + *got +
                          ", scanned " + f.sha256 + "); nothing was changed, try again");
        }
      } else if (f.kind == "symlink") {
        TRY(w.add_symlink(f.member, f.target, fm));
      }
    }
    TRY(w.finish());
    digest = w.output_sha256();
  }
  // Both files are complete and durable under temporary names before either name appears:
  // a failure while writing the list (disk full) leaves no backup under its final name, and
  // restore refuses a backup without its list (issue 14, B14).
  const std::string side = backup_sums(meta) + digest + "  " + out.filename().string() + "\n";
  const fs::path side_path = out.string() + ".sha256";
  TRY_ASSIGN(util::AtomicFile list, util::AtomicFile::create(side_path, 0644));
  TRY(list.write(side));
  for (const auto* f : {&file, &list}) {
    if (::fsync(f->fd()) != 0) {
      return fail_errno("fsync " + f->temp_path().string(), errno);
    }
  }
  TRY(file.commit(util::Fsync::no)); // the directory is fsynced once, by the list's commit
  if (auto listed = list.commit(util::Fsync::yes); !listed) {
    ::unlink(out.c_str()); // never the tarball without its list
    (void)util::fsync_dir(out.parent_path());
    return listed;
  }
  return {};
}

Result<BackupMeta> verify_backup(const fs::path& file, std::vector<std::string>& warnings) {
  const std::string name = file.string();
  TRY_ASSIGN(archive::BackupReader r, archive::BackupReader::open(file));
  std::string sums;
  TRY_ASSIGN(BackupMeta meta, read_meta(r, name, &sums));
  TRY(check_expansion(name, meta));
  std::map<std::string, const BackupFile*> expected;
  for (const auto& f : meta.files) {
    expected[f.member] = &f;
  }
  std::map<std::string, bool> seen;
  while (true) {
    TRY_ASSIGN(auto m, r.next());
    if (!m) {
      break;
    }
    auto it = expected.find(m->name);
    if (it == expected.end()) {
      return bad(name,
                 "member " + archive::in_quotes(m->name) + " is not listed in " + k_backup_meta);
    }
    if (seen[m->name]) {
      return bad(name, "member " + archive::in_quotes(m->name) + " appears twice");
    }
    seen[m->name] = true;
    const BackupFile& f = *it->second;
    using K = archive::Member::Kind;
    K want = f.kind == "file" ? K::file : f.kind == "symlink" ? K::symlink : K::directory;
    if (m->kind != want) {
      return bad(name, "member " + archive::in_quotes(m->name) + " is not a " + f.kind);
    }
    if (f.kind == "symlink" && m->target != f.target) {
      return bad(name, "link " + archive::in_quotes(m->name) + " points at " +
                           archive::in_quotes(m->target) + ", recorded " +
                           archive::in_quotes(f.target));
    }
    TRY_ASSIGN(std::string got, r.read_data({}));
    if (f.kind == "file" && (got != f.sha256 || m->size != f.size)) {
      return bad(name, "sha256 mismatch for " + archive::in_quotes(m->name) + ": specified " +
                           f.sha256 + " (" + std::to_string(f.size) + " bytes), got " + got + " (" +
                           std::to_string(m->size) + " bytes)");
    }
  }
  for (const auto& f : meta.files) {
    if (!seen[f.member]) {
      return bad(name, "member " + archive::in_quotes(f.member) + " is missing");
    }
  }
  fs::path side = file.string() + ".sha256";
  if (util::exists_nofollow(side)) {
    TRY_ASSIGN(std::string text, util::read_file(side, k_max_meta));
    TRY_ASSIGN(std::string digest, util::sha256_file(file));
    auto last = text.rfind('\n', text.size() >= 2 ? text.size() - 2 : 0);
    std::string body = last == std::string::npos ? "" : text.substr(0, last + 1);
    std::string tail = last == std::string::npos ? text : text.substr(last + 1);
    std::string listed = tail.substr(0, tail.find(' '));
    if (listed != digest) {
      return bad(name, "sha256 mismatch with " + side.string() + ": specified " + listed +
                           ", got " + digest);
    }
    if (body != sums) {
      return bad(name, side.string() + " lists other files than the backup's " + k_backup_sums);
    }
  } else {
    warnings.push_back("no " + side.filename().string() + " beside " + name +
                       ": checked against the list inside the backup only");
  }
  return meta;
}

Result<std::vector<FileRecord>> extract_backup(const fs::path& file, const BackupMeta& expected,
                                               const fs::path& staging) {
  const std::string name = file.string();
  TRY_ASSIGN(archive::BackupReader r, archive::BackupReader::open(file));
  TRY_ASSIGN(BackupMeta meta, read_meta(r, name, nullptr));
  TRY(check_expansion(name, meta));
  if (backup_meta_json(meta) != backup_meta_json(expected)) {
    return bad(name, "changed since it was verified");
  }
  std::map<std::string, const BackupFile*> by_member;
  for (const auto& f : meta.files) {
    by_member[f.member] = &f;
  }
  TRY_ASSIGN(archive::DestTree dest, archive::DestTree::open(staging));
  std::vector<FileRecord> out;
  std::map<std::string, bool> dirs_done;
  auto ensure_dirs = [&](const std::vector<std::string>& parts) -> Status {
    for (size_t i = 1; i < parts.size(); ++i) {
      std::vector<std::string> d(parts.begin(), parts.begin() + static_cast<long>(i));
      std::string key = archive::join_components(d);
      if (!dirs_done[key]) {
        TRY(dest.make_dir(d, key));
        dirs_done[key] = true;
        out.push_back(FileRecord{key, "dir", 0, 0755, "", ""});
      }
    }
    return {};
  };
  size_t count = 0;
  while (true) {
    TRY_ASSIGN(auto m, r.next());
    if (!m) {
      break;
    }
    auto it = by_member.find(m->name);
    if (it == by_member.end()) {
      return bad(name, "member " + archive::in_quotes(m->name) + " is not listed");
    }
    const BackupFile& f = *it->second;
    ++count;
    if (f.path.empty() || f.kind == "dir") {
      TRY(r.read_data({}));
      continue;
    }
    auto parts = archive::split_components(f.path);
    TRY(ensure_dirs(parts));
    if (f.kind == "symlink") {
      if (m->kind != archive::Member::Kind::symlink || m->target != f.target) {
        return bad(name, "link " + archive::in_quotes(m->name) + " changed since it was verified");
      }
      std::string t = f.entry_target.empty() ? f.target : f.entry_target;
      timespec ts{f.mtime, 0};
      TRY(dest.make_symlink(parts, t, &ts, f.path));
      out.push_back(FileRecord{f.path, "symlink", 0, 0777, "", t});
      continue;
    }
    if (m->kind != archive::Member::Kind::file || m->size != f.size) {
      return bad(name, "member " + archive::in_quotes(m->name) + " changed since it was verified");
    }
    uint32_t mode = archive::written_mode(f.mode, archive::EntryKind::file);
    TRY_ASSIGN(util::Fd fd, dest.create_file(parts, mode, f.path));
    TRY_ASSIGN(std::string got, r.read_data([&](const char* d, size_t n) {
      return util::write_all(fd.get(), d, n, f.path);
    }));
    if (got != f.sha256) {
      return bad(name, "sha256 mismatch for " + archive::in_quotes(m->name) +
                           " while importing: specified " + f.sha256 + ", got " + got);
    }
    timespec times[2] = {{f.mtime, 0}, {f.mtime, 0}};
    (void)::futimens(fd.get(), times);
    TRY(fd.close());
    out.push_back(FileRecord{f.path, "file", f.size, mode, f.sha256, ""});
  }
  if (count != meta.files.size()) {
    return bad(name, "members are missing (changed since it was verified)");
  }
  return out;
}

Status read_backup_members(
    const fs::path& file, const std::set<std::string>& wanted,
    const std::function<Status(const BackupFile&, archive::BackupReader&)>& consume) {
  const std::string name = file.string();
  TRY_ASSIGN(archive::BackupReader r, archive::BackupReader::open(file));
  TRY_ASSIGN(BackupMeta meta, read_meta(r, name, nullptr));
  std::map<std::string, const BackupFile*> by_member;
  for (const auto& f : meta.files) {
    by_member[f.member] = &f;
  }
  std::set<std::string> found;
  while (true) {
    TRY_ASSIGN(auto m, r.next());
    if (!m) {
      break;
    }
    auto it = by_member.find(m->name);
    if (it == by_member.end() || !wanted.count(m->name) || found.count(m->name)) {
      TRY(r.read_data({}));
      continue;
    }
    found.insert(m->name);
    TRY(consume(*it->second, r));
  }
  for (const auto& w : wanted) {
    if (!found.count(w)) {
      return bad(name, "member " + archive::in_quotes(w) + " is missing");
    }
  }
  return {};
}

} // namespace cudnnctl::store
