// SPDX-License-Identifier: Apache-2.0
// What every command gets: the user's global options, the config under the root, the layout,
// and the notes (warnings, actions, progress) it makes while it runs. What a command ends
// with is its result struct (each command's header), which the CLI prints.
#pragma once

#include "core/result.hpp"
#include "doctor/framework_gate.hpp"
#include "manifest/manifest.hpp"
#include "store/config.hpp"
#include "store/layout.hpp"
#include "store/view.hpp"
#include "txn/transaction.hpp"
#include "util/notes.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudnnctl::gates {
struct Env;
}
namespace cudnnctl::release {
struct Sources;
}

namespace cudnnctl::ops {

namespace fs = std::filesystem;

// --- Interface ---

inline constexpr const char* k_nvidia_redist =
    "https://developer.download.nvidia.com/compute/cudnn/redist/";

// Global options as given on the command line (unset = take the config's or the default).
struct GlobalOptions {
  std::string root = "/";
  std::optional<std::string> prefix;
  bool json = false;
  std::vector<std::string> mirrors;
  std::optional<std::string> manifest;
  std::optional<int> cuda;
  std::optional<std::string> platform;
  std::optional<std::string> cacert;
  bool dry_run = false;
  std::optional<double> lock_timeout;
  bool require_pin = false;
  bool force = false;
  bool user = false; // --user: the non-root mode (store/user_dirs.hpp)
  bool quiet = false;
  int verbose = 0;
  // --scan DIR of the switching commands: more places the framework gate searches.
  std::vector<std::string> scan;
  std::string argv_line; // the command line, for history and the journal
};

using store::Config;
using store::GenInfo;

// What every command's result says first (the contract's "changed", "active", "previous").
struct Outcome {
  bool changed = false;
  std::optional<GenInfo> active;
  std::optional<GenInfo> previous;
  // The framework gate's verdicts (ops/framework_gate.hpp), when it ran: data.frameworks.
  std::vector<doctor::FrameworkVerdict> frameworks;
};

class Context {
public:
  // `dirs`: cudnnctl's own directories (the system's, or the user's under --user);
  // `default_prefix`: the prefix without --prefix and the config's.
  Context(GlobalOptions options, Config config, store::OwnDirs dirs = {},
          std::string default_prefix = "/opt/cudnn");

  const GlobalOptions& opts() const { return m_opts; }
  const Config& config() const { return m_config; }
  const store::Layout& layout() const { return m_layout; }
  util::Notes& notes() { return m_notes; }
  const util::Notes& notes() const { return m_notes; }

  // Effective settings: flag, else config, else default.
  std::vector<std::string> mirrors() const;
  double lock_timeout() const;
  bool require_pin() const;
  std::optional<std::string> cacert() const;
  bool dry_run() const { return m_opts.dry_run; }
  // The non-root mode (--user, or implied: not root and --prefix under $HOME).
  bool user_mode() const { return m_layout.user_mode(); }

  // Notes (util/notes.hpp).
  void warn(const std::string& message) { m_notes.warn(message); }
  void action(const std::string& what, std::vector<std::string> detail = {}) {
    m_notes.action(what, std::move(detail));
  }
  void info(const std::string& message, int level = 0) const { m_notes.info(message, level); }

  // What transactions of this command work on (valid while the Context lives, unmoved).
  txn::Site site();

private:
  GlobalOptions m_opts;
  Config m_config;
  store::Layout m_layout;
  util::Notes m_notes;
};

// Where releases come from for this command (release/resolve.hpp).
release::Sources sources(const Context& ctx);

// What the gates around a switch read (gates/findings.hpp).
gates::Env gates_env(Context& ctx);

// The release a stored entry was installed from, as the requirement gates take it.
manifest::Selection selection_of(const store::EntryInfo& entry);

// Builds the context (loads the config under --root). Error: ErrorCode::usage.
[[nodiscard]] Result<Context> make_context(const GlobalOptions& options);

// A snapshot of the store; warnings about damaged parts become notes.
[[nodiscard]] Result<store::StoreView> read_store(Context& ctx);

// GenInfo for generation n of `view` (nullopt when it or its entry is missing).
std::optional<GenInfo> gen_info(const Context& ctx, const store::StoreView& view,
                                std::optional<int> n);

// Sets out.active and out.previous (the rollback target) from `view`, or from a fresh
// snapshot.
void fill_active(const Context& ctx, const store::StoreView& view, Outcome& out);
[[nodiscard]] Status fill_active(Context& ctx, Outcome& out);

// Entries matching a VERSION argument, filtered by --cuda/--platform when given.
std::vector<const store::EntryInfo*> match_entries(const Context& ctx, const store::StoreView& view,
                                                   const manifest::VersionArg& version_arg);

// Takes the state lock and recovers (txn::Lock::take); what recovery did becomes actions and
// progress lines.
[[nodiscard]] Result<txn::Lock> lock(Context& ctx);

// Another prefix's build in the loader drop-in (issue 34, F15): a sentence saying so, nullopt
// when the drop-in is this prefix's, stale or absent. lock() refuses every mutating command
// then (exit 2), before anything changes; `status` and `recover` warn.
[[nodiscard]] std::optional<std::string> loader_owned_elsewhere(const Context& ctx);
[[nodiscard]] Status check_loader_owner(const Context& ctx);

// When an interrupted transaction left a journal, takes the lock and recovers now (then
// releases the lock). For commands that plan from the store before taking the lock: a plan
// made from a half-finished transaction's leftovers (an entry that recovery then deletes)
// would be wrong. No-op under --dry-run or without a journal.
[[nodiscard]] Status recover_pending(Context& ctx);

// True when there is no journal (nothing pending): a plan made now without the lock is worth
// checking before the lock is taken (which creates the state directory).
[[nodiscard]] bool nothing_pending(const Context& ctx);

} // namespace cudnnctl::ops
