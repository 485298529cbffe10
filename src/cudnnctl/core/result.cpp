// SPDX-License-Identifier: Apache-2.0
#include "core/result.hpp"

#include <cerrno>
#include <cstring>

namespace cudnnctl::core {

ErrorCode category(ErrorCode code) {
  switch (code) {
  case ErrorCode::nothing_active:
  case ErrorCode::nothing_to_roll_back:
  case ErrorCode::no_such_generation:
  case ErrorCode::not_installed:
  case ErrorCode::is_active:
  case ErrorCode::unknown_version:
  case ErrorCode::needs_root:
  case ErrorCode::confirmation_required:
    return ErrorCode::usage;
  case ErrorCode::no_cuda_build:
  case ErrorCode::framework_incompatible:
    return ErrorCode::requirement;
  case ErrorCode::mirror_not_found:
  case ErrorCode::mirror_not_manifest:
    return ErrorCode::network;
  default:
    return code;
  }
}

const std::vector<ErrorCode>& all_error_codes() {
  static const std::vector<ErrorCode> all = {ErrorCode::environment,
                                             ErrorCode::internal,
                                             ErrorCode::usage,
                                             ErrorCode::network,
                                             ErrorCode::integrity,
                                             ErrorCode::rolled_back,
                                             ErrorCode::busy,
                                             ErrorCode::requirement,
                                             ErrorCode::problems,
                                             ErrorCode::nothing_active,
                                             ErrorCode::nothing_to_roll_back,
                                             ErrorCode::no_such_generation,
                                             ErrorCode::not_installed,
                                             ErrorCode::is_active,
                                             ErrorCode::unknown_version,
                                             ErrorCode::no_cuda_build,
                                             ErrorCode::mirror_not_found,
                                             ErrorCode::mirror_not_manifest,
                                             ErrorCode::needs_root,
                                             ErrorCode::confirmation_required,
                                             ErrorCode::framework_incompatible};
  return all;
}

int exit_code(ErrorCode code) {
  switch (category(code)) {
  case ErrorCode::environment:
  case ErrorCode::internal:
    return 1;
  case ErrorCode::usage:
    return 2;
  case ErrorCode::network:
    return 3;
  case ErrorCode::integrity:
    return 4;
  case ErrorCode::rolled_back:
    return 5;
  case ErrorCode::busy:
    return 6;
  case ErrorCode::requirement:
    return 7;
  case ErrorCode::problems:
    return 8;
  default:
    return 1;
  }
}

const char* code_name(ErrorCode code) {
  switch (code) {
  case ErrorCode::environment:
    return "environment";
  case ErrorCode::internal:
    return "internal";
  case ErrorCode::usage:
    return "usage";
  case ErrorCode::network:
    return "network";
  case ErrorCode::integrity:
    return "integrity";
  case ErrorCode::rolled_back:
    return "rolled_back";
  case ErrorCode::busy:
    return "busy";
  case ErrorCode::requirement:
    return "requirement";
  case ErrorCode::problems:
    return "problems";
  case ErrorCode::nothing_active:
    return "nothing_active";
  case ErrorCode::confirmation_required:
    return "confirmation_required";
  case ErrorCode::nothing_to_roll_back:
    return "nothing_to_roll_back";
  case ErrorCode::no_such_generation:
    return "no_such_generation";
  case ErrorCode::not_installed:
    return "not_installed";
  case ErrorCode::is_active:
    return "is_active";
  case ErrorCode::unknown_version:
    return "unknown_version";
  case ErrorCode::no_cuda_build:
    return "no_cuda_build";
  case ErrorCode::mirror_not_found:
    return "mirror_not_found";
  case ErrorCode::mirror_not_manifest:
    return "mirror_not_manifest";
  case ErrorCode::needs_root:
    return "needs_root";
  case ErrorCode::framework_incompatible:
    return "framework_incompatible";
  }
  return "internal";
}

std::string Error::full_message() const {
  std::string out;
  for (auto it = context.rbegin(); it != context.rend(); ++it) {
    out += *it;
    out += ": ";
  }
  out += message;
  return out;
}

Error errno_error(std::string_view what, int err, ErrorCode code) {
  std::string message(what);
  message += ": ";
  message += std::strerror(err);
  switch (err) {
  case ENOSPC:
    // No claim about what is active: after the flip that is the transaction's to say (issue
    // 14, B4).
    message += " (free some space and run the command again)";
    break;
  case EROFS:
    message += " (the filesystem is mounted read-only)";
    break;
  case EACCES:
  case EPERM:
    message += " (run as root, or choose --root/--prefix you can write)";
    break;
  default:
    break;
  }
  return Error(code, std::move(message));
}

} // namespace cudnnctl::core
