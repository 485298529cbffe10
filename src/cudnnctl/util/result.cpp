// SPDX-License-Identifier: Apache-2.0
#include "util/result.hpp"

#include <cerrno>
#include <cstring>

namespace cudnnctl {

int exit_code(ErrorCode code) {
  switch (code) {
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
  }
  return 1;
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

} // namespace cudnnctl
