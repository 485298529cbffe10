// SPDX-License-Identifier: Apache-2.0
#include "ops/context.hpp"

#include "gates/findings.hpp"
#include "integrate/loader.hpp"
#include "ops/catalog.hpp"
#include "ops/trust.hpp"
#include "release/resolve.hpp"
#include "store/user_dirs.hpp"
#include "util/fs.hpp"
#include "util/state_file.hpp"

#include <unistd.h>

namespace cudnnctl::ops {

Context::Context(GlobalOptions options, Config config, store::OwnDirs dirs,
                 std::string default_prefix)
    : m_opts(std::move(options)), m_config(std::move(config)),
      m_layout(m_opts.root, m_opts.prefix.value_or(m_config.prefix.value_or(default_prefix)),
               std::move(dirs)),
      m_notes(util::NoteStyle{!m_opts.json, m_opts.quiet, m_opts.verbose, m_opts.dry_run}) {}

std::vector<std::string> Context::mirrors() const {
  if (!m_opts.mirrors.empty()) {
    return m_opts.mirrors;
  }
  if (!m_config.mirrors.empty()) {
    return m_config.mirrors;
  }
  return {k_nvidia_redist};
}

double Context::lock_timeout() const {
  return m_opts.lock_timeout.value_or(m_config.lock_timeout);
}
bool Context::require_pin() const {
  return m_opts.require_pin || m_config.require_pin;
}
std::optional<std::string> Context::cacert() const {
  return m_opts.cacert ? m_opts.cacert : m_config.cacert;
}

txn::Site Context::site() {
  return txn::Site{m_layout, m_config, m_notes, m_opts.argv_line, lock_timeout()};
}

release::Sources sources(const Context& ctx) {
  return release::Sources{ctx.mirrors(), ctx.opts().manifest,     ctx.require_pin(),
                          ctx.cacert(),  ctx.layout().pins_dir(), &builtin_catalog()};
}

manifest::Selection selection_of(const store::EntryInfo& e) {
  return {.label = e.label,
          .version = e.version,
          .parsed_version = e.parsed_version,
          .platform = e.platform,
          .cuda_major = e.cuda_major};
}

gates::Env gates_env(Context& ctx) {
  return gates::Env{ctx.layout(), ctx.config(), ctx.notes(), ctx.opts().cuda, ctx.opts().force};
}

Result<Context> make_context(const GlobalOptions& options) {
  if (options.root.empty() || options.root[0] != '/') {
    return fail(ErrorCode::usage, "--root must be an absolute path, got \"" + options.root + "\"");
  }
  if (options.prefix && (options.prefix->empty() || (*options.prefix)[0] != '/')) {
    return fail(ErrorCode::usage, "--prefix must be an absolute path inside the root, got \"" +
                                      *options.prefix + "\"");
  }
  TRY(check_root_dir(options.root));
  // The non-root mode: asked for, or implied by a non-root user's prefix under $HOME.
  bool user = options.user ||
              (::geteuid() != 0 && options.prefix && store::under_home(fs::path(*options.prefix)));
  store::OwnDirs dirs;
  std::string default_prefix = "/opt/cudnn";
  if (user) {
    TRY_ASSIGN(store::UserDirs u, store::user_dirs());
    dirs = u.own;
    default_prefix = u.prefix.string();
  }
  TRY_ASSIGN(Config config, store::load_config(options.root, dirs.config));
  // A prefix from config.toml is named by its line, not as a flag the user never gave.
  std::string shown;
  if (!options.prefix && config.prefix) {
    shown = config.prefix_source + ": prefix " + *config.prefix;
  }
  Context ctx(options, std::move(config), dirs, default_prefix);
  TRY(check_prefix_placement(ctx.layout(), shown));
  return ctx;
}

Result<store::StoreView> read_store(Context& ctx) {
  std::vector<std::string> warnings;
  TRY_ASSIGN(store::StoreView view, store::read_store(ctx.layout(), warnings));
  for (const auto& w : warnings) {
    ctx.warn(w);
  }
  return view;
}

std::optional<GenInfo> gen_info(const Context& ctx, const store::StoreView& view,
                                std::optional<int> n) {
  return store::gen_info(ctx.layout(), view, n);
}

void fill_active(const Context& ctx, const store::StoreView& view, Outcome& out) {
  auto pair = store::active_pair(ctx.layout(), view);
  out.active = pair.active;
  out.previous = pair.previous;
}

Status fill_active(Context& ctx, Outcome& out) {
  TRY_ASSIGN(store::StoreView view, read_store(ctx));
  fill_active(ctx, view, out);
  return {};
}

std::vector<const store::EntryInfo*> match_entries(const Context& ctx, const store::StoreView& view,
                                                   const manifest::VersionArg& version_arg) {
  return store::match_entries(view, version_arg, ctx.opts().cuda, ctx.opts().platform);
}

Result<txn::Lock> lock(Context& ctx) {
  TRY(util::hook("before-lock")); // test hook: what another process does between check and lock
  TRY_ASSIGN(txn::Lock held, txn::Lock::take(ctx.site()));
  for (const auto& d : held.recovered()) {
    ctx.action(d);
    ctx.info(d);
  }
  TRY(check_loader_owner(ctx));
  // Every transaction ends by appending to the history: a history that cannot be written
  // (issue 14, B13: a FIFO there) is said before anything is downloaded or changed.
  TRY(util::check_state_file(ctx.layout().history_file()));
  return held;
}

namespace {

std::string owned_elsewhere_text(const Context& ctx, const std::string& other) {
  return "the loader drop-in " + ctx.layout().ld_conf_dropin().string() +
         " names a build of the prefix " + other + ", not of " +
         ctx.layout().sys_prefix().string() +
         ": one root's loader, state and history serve one prefix";
}

} // namespace

std::optional<std::string> loader_owned_elsewhere(const Context& ctx) {
  auto other = integrate::loader_dropin_other_prefix(ctx.layout());
  if (!other) {
    return std::nullopt;
  }
  return owned_elsewhere_text(ctx, *other);
}

Status check_loader_owner(const Context& ctx) {
  auto other = integrate::loader_dropin_other_prefix(ctx.layout()); // one read of the drop-in
  if (!other) {
    return {};
  }
  return fail(ErrorCode::usage,
              owned_elsewhere_text(ctx, *other) + "; run the command with `--prefix " + *other +
                  "`, or release that prefix first (`cudnnctl --prefix " + *other + " purge`)");
}

Status recover_pending(Context& ctx) {
  if (ctx.dry_run() || nothing_pending(ctx)) {
    return {};
  }
  TRY_ASSIGN(txn::Lock held, lock(ctx));
  return {};
}

bool nothing_pending(const Context& ctx) {
  return !util::exists_nofollow(ctx.layout().journal_file());
}

} // namespace cudnnctl::ops
