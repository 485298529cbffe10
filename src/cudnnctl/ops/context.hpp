// SPDX-License-Identifier: Apache-2.0
// What every operation gets: the user's global options, the config under the root, the
// layout, and the Report that the CLI prints (human text or the --json object).
#pragma once

#include "store/layout.hpp"
#include "util/result.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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
  bool quiet = false;
  int verbose = 0;
  std::string argv_line; // the command line, for history and the journal
};

// /etc/cudnnctl/config.toml under the root. Every key is optional.
struct Config {
  std::vector<std::string> mirrors;
  std::optional<std::string> prefix;
  std::string cuda_home = "/usr/local/cuda";
  std::optional<int> cuda;
  std::optional<std::string> platform;
  std::optional<std::string> cacert;
  bool require_pin = false;
  bool require_signed_recalls = false; // unsigned or badly signed recall lists are errors
  double lock_timeout = 300;
  int keep_generations = 3;
  int smoke_timeout = 120;
  bool manage_cuda_home = true;
};

// Parses config text; unknown keys and wrong types: ErrorCode::usage naming file:line.
[[nodiscard]] Result<Config> parse_config(std::string_view text, std::string_view source);

// Reads <root>/etc/cudnnctl/config.toml (missing: defaults).
[[nodiscard]] Result<Config> load_config(const std::string& root);

// A generation as the contract's "active"/"previous" objects describe it.
struct GenInfo {
  std::string version;
  int cuda = 0;
  std::string platform;
  int generation = 0;
  std::string path; // host path of the store entry
  std::string entry;
  std::string origin;
};
nlohmann::json to_json(const std::optional<GenInfo>& g);

struct Report {
  std::string command;
  bool changed = false;
  std::optional<GenInfo> active;
  std::optional<GenInfo> previous;
  std::vector<std::string> actions;
  std::vector<std::string> warnings;
  nlohmann::json data = nlohmann::json::object();
  std::vector<std::string> lines; // human-readable result lines for stdout
};

class Context {
public:
  Context(GlobalOptions options, Config config);

  const GlobalOptions& opts() const { return m_opts; }
  const Config& config() const { return m_config; }
  const store::Layout& layout() const { return m_layout; }
  Report& report() { return m_report; }

  // Effective settings: flag, else config, else default.
  std::vector<std::string> mirrors() const;
  double lock_timeout() const;
  bool require_pin() const;
  std::optional<std::string> cacert() const;
  bool dry_run() const { return m_opts.dry_run; }
  bool human() const { return !m_opts.json; }

  // A warning: recorded in the report and, in human mode, printed to stderr now.
  void warn(const std::string& message);
  // Something done (or, under --dry-run, that would be done): recorded in "actions".
  void action(const std::string& what);
  // Progress/diagnostics on stderr (human mode, not -q). Level 1 needs -v.
  void info(const std::string& message, int level = 0) const;
  // A result line for stdout (human mode).
  void line(const std::string& text) { m_report.lines.push_back(text); }

private:
  GlobalOptions m_opts;
  Config m_config;
  store::Layout m_layout;
  Report m_report;
};

// Builds the context (loads the config under --root). Error: ErrorCode::usage.
[[nodiscard]] Result<Context> make_context(const GlobalOptions& options);

} // namespace cudnnctl::ops
