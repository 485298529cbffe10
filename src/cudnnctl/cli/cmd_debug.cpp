// SPDX-License-Identifier: Apache-2.0
// Hidden commands for benchmarks and diagnostics (not in --help, not part of the contract).
#include "cli/commands.hpp"
#include "util/sha256.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace cudnnctl::cli {

void register_debug(CLI::App& app, Action& action) {
  // `debug-sha256 FILE...`: the SHA-256 that install computes over an archive (OpenSSL EVP,
  // 1 MiB reads), printed like sha256sum. bench/run compares it with sha256sum.
  auto files = std::make_shared<std::vector<std::string>>();
  auto* sha = app.add_subcommand("debug-sha256", "Print the SHA-256 of files (benchmarks)");
  sha->group(""); // hidden
  sha->add_option("FILE", *files, "Files to hash")->required();
  on_run(sha, action, [files](ops::Context&, Report& report) -> Status {
    for (const auto& f : *files) {
      TRY_ASSIGN(std::string digest, util::sha256_file(f));
      report.line(digest + "  " + f);
    }
    return {};
  });
}

} // namespace cudnnctl::cli
