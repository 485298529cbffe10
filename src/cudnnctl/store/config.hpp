// SPDX-License-Identifier: Apache-2.0
// /etc/cudnnctl/config.toml under the root: the site's settings. Command-line flags override
// them (ops::Context says which wins).
#pragma once

#include "core/result.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::store {

// --- Interface ---

// Every key is optional.
struct Config {
  std::vector<std::string> mirrors;
  std::optional<std::string> prefix;
  std::string prefix_source; // "<config.toml>:LINE" where `prefix` was set, for its errors
  // The default toolkit: its CUDA major picks builds (--cuda default, the loader's choice
  // between builds of one cuDNN major).
  std::string cuda_home = "/usr/local/cuda";
  // The CUDA homes that get links (integrate/home_links.hpp), absolute and distinct; empty
  // (unset): cuda_home alone. Use homes().
  std::vector<std::string> cuda_homes;
  std::optional<int> cuda;
  std::optional<std::string> platform;
  std::optional<std::string> cacert;
  bool require_pin = false;
  bool require_signed_recalls = false; // unsigned or badly signed recall lists are errors
  bool recalls_from_mirror = false;    // also read the mirrors' cudnnctl-recalls/ lists
  double lock_timeout = 300;
  int keep_generations = 3;
  int smoke_timeout = 120;
  std::optional<int> perf_gate; // percent: install --perf-gate PCT by default (gates/perfgate.hpp)
  bool manage_cuda_home = true;
  bool module_files = true; // Tcl and Lua module files per store entry (integrate/modulefiles.hpp)
  // The CUDA module a cuDNN module needs (`prereq`), "{cuda}" replaced by the entry's CUDA
  // major: "cuda/{cuda}" gives `prereq cuda/13`. Unset: a comment naming the CUDA major only.
  std::optional<std::string> cuda_module;
  // Keep the verified archive in the download cache after an install (a reinstall or
  // another root's install needs no download); false: as `install --no-cache`.
  bool keep_cache = true;
  // Directories the framework gate also searches for framework consumers (site-packages,
  // conda environments, virtual environments), as the managed system names them.
  std::vector<std::string> framework_paths;

  // The managed CUDA homes: cuda_homes, or [cuda_home] when it is unset.
  [[nodiscard]] std::vector<std::string> homes() const {
    return cuda_homes.empty() ? std::vector<std::string>{cuda_home} : cuda_homes;
  }
};

// Parses config text; unknown keys and wrong types: ErrorCode::usage naming file:line.
[[nodiscard]] Result<Config> parse_config(std::string_view text, std::string_view source);

// Refuses what configures cudnnctl under `root` when others could have written it:
// `config_dir`, config.toml and every file in pins.d/, keys.d/, recalls.d/ and compat.d/, and
// under --user also /etc/cudnnctl's keys.d/, recalls.d/ and compat.d/, which every mode reads
// (each owned by root or us, writable by nobody else, a regular file; the rules of
// txn::check_ownership). What the host path reaches must be what the walk inside the root
// judged (util::check_trusted_file). Missing ones are fine. Error: ErrorCode::environment.
// `config_dir`: /etc/cudnnctl, or the user's under --user (store/user_dirs.hpp).
[[nodiscard]] Status check_config_trust(const std::filesystem::path& root,
                                        const std::filesystem::path& config_dir = "/etc/cudnnctl");

// Reads <root><config_dir>/config.toml (missing: defaults) after check_config_trust.
[[nodiscard]] Result<Config> load_config(const std::string& root,
                                         const std::filesystem::path& config_dir = "/etc/cudnnctl");

} // namespace cudnnctl::store
