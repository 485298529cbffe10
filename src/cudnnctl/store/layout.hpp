// SPDX-License-Identifier: Apache-2.0
// Where everything lives, for one --root and --prefix. Under a root other than "/", paths are
// resolved inside the root (lstat of each component, no other I/O): a symlink on the way with
// an absolute target is taken as the managed system would see it once the root becomes "/"
// (`<root>/etc -> /srv/x/etc` means `<root>/srv/x/etc`), so nothing is ever read or written
// outside the root through such a link.
#pragma once

#include <filesystem>
#include <string>

namespace cudnnctl::store {

namespace fs = std::filesystem;

// --- Interface ---

// cudnnctl's own directories as the managed system sees them: the system ones, or under
// --user the XDG directories of the user (store/user_dirs.hpp). `user`: the non-root mode (no
// /etc writes, no loader drop-in, no CUDA-home links, no ldconfig).
struct OwnDirs {
  fs::path state = "/var/lib/cudnnctl";
  fs::path cache = "/var/cache/cudnnctl";
  fs::path config = "/etc/cudnnctl";
  bool user = false;
};

// Paths inside the managed system (DESIGN.md "Paths"): `sys_*` are absolute paths as the
// managed system sees them (what goes into ld.so.conf.d); the others are host paths (where
// this process reads and writes: the system path under --root).
class Layout {
public:
  // `root`: host directory standing for "/" ("/" for the real system). `prefix`: absolute
  // path inside the root (default /opt/cudnn).
  Layout(fs::path root, fs::path prefix, OwnDirs dirs = {});

  [[nodiscard]] const fs::path& root() const { return m_root; }
  [[nodiscard]] bool root_is_slash() const { return m_root == "/"; }
  // The non-root mode (--user): nothing outside the user's directories is written.
  [[nodiscard]] bool user_mode() const { return m_dirs.user; }
  [[nodiscard]] const OwnDirs& own_dirs() const { return m_dirs; }
  // Host path of an absolute path inside the root: its directory resolved inside the root
  // (host_dir), its last name kept as it is (a symlink we replace stays that symlink).
  [[nodiscard]] fs::path host(const fs::path& sys_path) const;
  // Host path of a directory inside the root, every symlink in it resolved inside the root
  // (util::resolve_in_root); missing components are kept as they are.
  [[nodiscard]] fs::path host_dir(const fs::path& sys_path) const;

  [[nodiscard]] const fs::path& sys_prefix() const { return m_prefix; }
  [[nodiscard]] fs::path prefix_dir() const { return host_dir(m_prefix); }
  [[nodiscard]] fs::path store_dir() const { return host_dir(m_prefix / "store"); }
  [[nodiscard]] fs::path entry_dir(const std::string& name) const { return store_dir() / name; }
  [[nodiscard]] fs::path sys_entry_dir(const std::string& name) const {
    return m_prefix / "store" / name;
  }
  [[nodiscard]] fs::path generations_dir() const { return host_dir(m_prefix / "generations"); }
  [[nodiscard]] fs::path generation_link(int n) const {
    return generations_dir() / std::to_string(n);
  }
  [[nodiscard]] fs::path generation_meta(int n) const {
    return generations_dir() / (std::to_string(n) + ".json");
  }
  [[nodiscard]] fs::path current_link() const { return prefix_dir() / "current"; }

  [[nodiscard]] fs::path state_dir() const { return host_dir(m_dirs.state); }
  [[nodiscard]] fs::path lock_file() const { return state_dir() / "lock"; }
  [[nodiscard]] fs::path journal_file() const { return state_dir() / "journal.json"; }
  [[nodiscard]] fs::path history_file() const { return state_dir() / "history.jsonl"; }
  [[nodiscard]] fs::path backups_dir() const { return host_dir(m_dirs.state / "backups"); }
  [[nodiscard]] fs::path cache_dir() const { return host_dir(m_dirs.cache); }
  [[nodiscard]] fs::path config_file() const { return host(m_dirs.config / "config.toml"); }
  [[nodiscard]] fs::path pins_dir() const { return host_dir(m_dirs.config / "pins.d"); }
  [[nodiscard]] fs::path ld_conf_dropin() const {
    return host("/etc/ld.so.conf.d/00-cudnnctl.conf");
  }

private:
  fs::path m_root;
  fs::path m_prefix;
  OwnDirs m_dirs;
};

} // namespace cudnnctl::store
