// SPDX-License-Identifier: Apache-2.0
#include "ops/plan.hpp"

#include "integrate/home_links.hpp"
#include "integrate/loader.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <sys/statvfs.h>

namespace cudnnctl::ops {

std::string url_host(const std::string& url) {
  if (url.starts_with("file://")) {
    return "a local file";
  }
  auto start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  auto end = url.find('/', start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string bytes_text(uint64_t bytes) {
  std::string digits = std::to_string(bytes), grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) {
      grouped += ',';
    }
    grouped += digits[i];
  }
  return grouped + " bytes (" + util::human_bytes(bytes) + ")";
}

Status plan_space(Context& ctx, const fs::path& dir, uint64_t needed) {
  fs::path probe = dir;
  while (!probe.empty() && !util::exists_nofollow(probe) && probe != probe.parent_path()) {
    probe = probe.parent_path();
  }
  struct statvfs st {};
  std::string free = "free space unknown";
  std::optional<uint64_t> avail;
  if (::statvfs(probe.c_str(), &st) == 0) {
    avail = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
    free = util::human_bytes(*avail) + " free";
  }
  ctx.action("would need about " + util::human_bytes(needed) + " of disk in " + dir.string() +
                 " (" + free + ")",
             {"the archive's size twice: its files in staging, the entry published by rename",
              "free space measured on " + probe.string()});
  if (avail && *avail < needed) {
    // The install itself would stop with a full disk (exit 1): the plan says so the same way.
    return fail(ErrorCode::environment, "not enough disk space: the install needs about " +
                                            util::human_bytes(needed) + " in " + dir.string() +
                                            ", " + probe.string() + " has " +
                                            util::human_bytes(*avail) +
                                            " free; free space there or choose another "
                                            "--prefix (dry run: nothing was changed)");
  }
  return {};
}

Status plan_switch(Context& ctx, const std::string& entry, std::optional<int> generation,
                   const std::optional<gates::Demands>& checks) {
  const auto& layout = ctx.layout();
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  const std::string from =
      view.current ? "generation " + std::to_string(*view.current) : std::string("nothing active");
  if (generation) {
    ctx.action("would create generation " + std::to_string(*generation) + " (parent: " + from +
                   ") and point " + layout.host(layout.sys_prefix() / "current").string() +
                   " at it",
               {"generations/" + std::to_string(*generation) + " -> ../store/" + entry});
  }
  const fs::path lib = layout.sys_entry_dir(entry) / "lib";
  ctx.action("would write the loader drop-in " + layout.ld_conf_dropin().string() + " naming " +
                 lib.string() + ", then run ldconfig",
             {integrate::ldconfig_path() + " -X" +
              (layout.root() == "/" ? "" : " -r " + layout.root().string())});
  TRY_ASSIGN(auto home, integrate::preview_cuda_home(layout, ctx.config(), entry,
                                                     checks && checks->alongside));
  if (home) {
    const std::string dirs = util::join(home->dirs, ", ");
    if (!home->counted) {
      ctx.action("would link the entry's cudnn*.h and libcudnn* names in " + dirs +
                 " (CUDA-home links)");
    } else if (home->linked || home->removed) {
      ctx.action("would change CUDA-home links: " + std::to_string(home->linked) +
                     " made or repointed, " + std::to_string(home->removed) + " removed in " + dirs,
                 home->ops);
    } else {
      ctx.action("CUDA-home links in " + dirs + " already name " + entry + ": unchanged");
    }
    for (const auto& line : home->homes) {
      ctx.action("CUDA home " + line);
    }
    for (const auto& w : home->warnings) {
      ctx.warn(w);
    }
  }
  if (!checks) {
    return {};
  }
  ctx.action("would check that ldconfig resolves libcudnn.so into " + lib.string() +
             " (else: rolled back, exit 5)");
  if (checks->no_smoke) {
    ctx.action("would skip the GPU smoke test (--no-smoke)");
  } else {
    ctx.action(std::string("would run the GPU smoke test on every visible GPU (failure: rolled "
                           "back, exit 5; no usable GPU: ") +
               (checks->require_gpu ? "rolled back, --require-gpu" : "skipped with a warning") +
               ")");
  }
  if (checks->perf_gate) {
    ctx.action("would bench the new entry against the previous generation's (--perf-gate " +
               util::fixed(*checks->perf_gate, 1) + " %)");
  }
  return {};
}

uint64_t tree_bytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2) && !it->is_symlink(e2)) {
      total += it->file_size(e2);
    }
  }
  return total;
}

std::string summary_line(const Context& ctx, double seconds) {
  // What the lines above do not say: the time, and the disk the store and the cache now use
  // (the result line above names the active build; this one does not repeat it).
  return "done in " + util::fixed(seconds, 1) + " s; store " +
         util::human_bytes(tree_bytes(ctx.layout().store_dir())) + ", download cache " +
         util::human_bytes(tree_bytes(ctx.layout().cache_dir())) + " in " +
         ctx.layout().cache_dir().string() + " (`cudnnctl gc --cache` empties it)";
}

} // namespace cudnnctl::ops
