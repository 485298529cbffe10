// SPDX-License-Identifier: Apache-2.0
// Inside `install` (ops/install.cpp): the request parsed once at the edge, the job it becomes
// once the release is resolved, and the --dry-run plan of a job (ops/install_dry_run.cpp).
#pragma once

#include "ops/install.hpp"
#include "release/resolve.hpp"

#include <string>
#include <vector>

namespace cudnnctl::ops {

// --- Interface ---

// What was asked, parsed once: the options, VERSION, the target host and the components.
struct InstallRequest {
  InstallOptions o;
  manifest::VersionArg version; // o.version parsed
  release::Target target;
  std::vector<std::string> components;
};

// One install of a resolved build: the request and the store entry it becomes.
struct InstallJob {
  const InstallRequest& req;
  const release::Resolved& r;
  const std::string& name;
};

// Parsed before anything is read from a mirror: VERSION (or the name of --archive's file; a
// full version is checked here, a partial one is resolved later against the mirrors), the
// components, and the target host (platform and CUDA major; with neither --cuda, config nor
// toolkit, the active build's major). Errors: usage.
[[nodiscard]] Result<InstallRequest> parse_request(Context& ctx, const InstallOptions& given);

// --dry-run of an install that needs the archive: what would happen, in order, nothing
// written (ops/plan.hpp).
[[nodiscard]] Status install_dry_run(Context& ctx, const InstallJob& job, InstallResult& out);

} // namespace cudnnctl::ops
