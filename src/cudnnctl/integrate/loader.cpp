// SPDX-License-Identifier: Apache-2.0
#include "integrate/loader.hpp"

#include "util/fs.hpp"
#include "util/process.hpp"
#include "util/strings.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::integrate {

std::string ldconfig_path() {
  for (const char* p : {"/sbin/ldconfig", "/usr/sbin/ldconfig", "/usr/bin/ldconfig"}) {
    if (::access(p, X_OK) == 0) {
      return p;
    }
  }
  return "ldconfig";
}

Status write_loader_dropin(const store::Layout& layout, const std::vector<std::string>& entries) {
  std::string content = entries.size() > 1
                            ? "# Managed by cudnnctl: the active cuDNN store entries, one per "
                              "cuDNN major. Do not edit;\n"
                            : "# Managed by cudnnctl: the active cuDNN store entry. Do not edit;\n";
  content += "# `cudnnctl use/rollback` rewrites this file.\n";
  for (const auto& entry : entries) {
    content += (layout.sys_entry_dir(entry) / "lib").string() + "\n";
  }
  // Already so (a revert to a generation whose drop-in was never replaced, a redo by
  // recovery): no write, so an undo also succeeds where the directory is read-only.
  struct stat st;
  if (::lstat(layout.ld_conf_dropin().c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      (st.st_mode & 07777) == 0644) {
    if (auto old = util::read_file(layout.ld_conf_dropin(), 1 << 16); old && *old == content) {
      return {};
    }
  }
  return util::write_file_atomic(layout.ld_conf_dropin(), content, 0644);
}

Status remove_loader_dropin(const store::Layout& layout) {
  if (!util::exists_nofollow(layout.ld_conf_dropin())) {
    return {};
  }
  TRY(util::remove_file(layout.ld_conf_dropin()));
  if (util::exists_nofollow(layout.ld_conf_dropin().parent_path())) {
    TRY(util::fsync_dir(layout.ld_conf_dropin().parent_path()));
  }
  return {};
}

std::optional<std::string> loader_dropin_dir(const store::Layout& layout) {
  auto text = util::read_file(layout.ld_conf_dropin(), 1 << 16);
  if (!text) {
    return std::nullopt;
  }
  for (const auto& line : util::split(*text, '\n')) {
    auto t = util::trim(line);
    if (!t.empty() && t[0] != '#') {
      return std::string(t);
    }
  }
  return std::string();
}

std::optional<std::string> loader_dropin_other_prefix(const store::Layout& layout) {
  if (layout.user_mode()) {
    return std::nullopt; // --user writes no drop-in: the system's is not this prefix's business
  }
  auto dir = loader_dropin_dir(layout);
  if (!dir || dir->empty() || (*dir)[0] != '/') {
    return std::nullopt;
  }
  namespace fs = std::filesystem;
  const fs::path lib = fs::path(*dir).lexically_normal();
  // <prefix>/store/<entry>/lib
  const fs::path store = lib.parent_path().parent_path();
  if (lib.filename() != "lib" || store.filename() != "store" ||
      !util::exists_nofollow(layout.host(lib))) {
    return std::nullopt;
  }
  const fs::path other = store.parent_path();
  if (other == layout.sys_prefix().lexically_normal()) {
    return std::nullopt;
  }
  return other.string();
}

Status run_ldconfig(const store::Layout& layout) {
  // -X: the cache only. A plain ldconfig also makes SONAME links in every directory the
  // loader config names (dpkg's, hand-made toolkits'): files cudnnctl does not own. The store
  // entries' chains are complete, and the CUDA-home links are already what ldconfig would make
  // of them (sonames.hpp), so the system's own ldconfig runs change nothing there either.
  std::vector<std::string> argv = {ldconfig_path(), "-X"};
  if (!layout.root_is_slash()) {
    argv.push_back("-r");
    argv.push_back(layout.root().string());
  }
  TRY_ASSIGN(auto r, util::run_process({.argv = argv, .timeout = std::chrono::seconds(120)}));
  if (!r.ok()) {
    std::string why = std::string(util::trim(r.err));
    return fail(ErrorCode::environment,
                util::join(argv, " ") + " failed (" + r.describe() + ")" +
                    (why.empty() ? "" : ": " + why.substr(0, why.find('\n'))));
  }
  return {};
}

std::vector<std::string> loader_config_warnings(const store::Layout& layout) {
  std::vector<std::string> out;
  auto conf = util::read_file(layout.host("/etc/ld.so.conf"), 1 << 20);
  if (!conf) {
    out.push_back(layout.host("/etc/ld.so.conf").string() + " is missing: ldconfig will ignore " +
                  layout.ld_conf_dropin().string() +
                  " (add the line `include /etc/ld.so.conf.d/*.conf`)");
    return out;
  }
  for (const auto& line : util::split(*conf, '\n')) {
    auto t = util::trim(line);
    if (t.starts_with("include") && t.find("/etc/ld.so.conf.d/") != std::string_view::npos) {
      return out;
    }
  }
  out.push_back(layout.host("/etc/ld.so.conf").string() +
                " has no `include /etc/ld.so.conf.d/*.conf`: ldconfig will ignore " +
                layout.ld_conf_dropin().string());
  return out;
}

Result<std::optional<std::string>> ldcache_lookup(const store::Layout& layout,
                                                  const std::string& soname) {
  std::vector<std::string> argv = {ldconfig_path()};
  if (!layout.root_is_slash()) {
    argv.push_back("-r");
    argv.push_back(layout.root().string());
  }
  argv.push_back("-p");
  TRY_ASSIGN(auto r, util::run_process({.argv = argv, .timeout = std::chrono::seconds(60)}));
  if (!r.ok()) {
    return fail(ErrorCode::environment, util::join(argv, " ") + " failed (" + r.describe() + ")");
  }
#if defined(__x86_64__)
  const std::string abi = "x86-64";
#elif defined(__aarch64__)
  const std::string abi = "AArch64";
#else
  const std::string abi;
#endif
  // Lines look like: "\tlibcudnn.so.9 (libc6,x86-64) => /opt/cudnn/store/.../libcudnn.so.9"
  for (const auto& line : util::split(r.out, '\n')) {
    auto t = util::trim(line);
    if (!t.starts_with(soname + " (")) {
      continue;
    }
    auto arrow = t.find(" => ");
    if (arrow == std::string_view::npos) {
      continue;
    }
    auto flags = t.substr(soname.size(), arrow - soname.size());
    if (!abi.empty() && flags.find(abi) == std::string_view::npos) {
      continue;
    }
    return std::optional<std::string>(std::string(t.substr(arrow + 4)));
  }
  return std::optional<std::string>();
}

} // namespace cudnnctl::integrate
