// SPDX-License-Identifier: Apache-2.0
// The application's errors as values: the error-code table of DESIGN.md, Result<T> =
// std::expected<T, Error>, propagated with TRY/TRY_ASSIGN (GCC 12 has std::expected but not its
// monadic members). Every module, util/ included, returns these; the names are re-exported into
// namespace cudnnctl so that callers write Result<T>, Error and ErrorCode unqualified.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudnnctl::core {

// --- Interface ---

// What went wrong, in the categories of the exit-code table in DESIGN.md.
enum class ErrorCode {
  environment, // 1: disk full, read-only filesystem, permission, missing tool
  internal,    // 1: a bug or broken invariant
  usage,       // 2: bad flag or input, unknown version/platform/variant, malformed manifest
  network,     // 3: download failed on every mirror
  integrity,   // 4: size/sha256 mismatch, pin mismatch, unsafe archive, pre-switch validation
  rolled_back, // 5: failed after the switch; the previous generation is active again
  busy,        // 6: another cudnnctl holds the lock
  requirement, // 7: CUDA major, driver minimum, GPU requirement not met
  problems,    // 8: verify/doctor found problems
  // Finer conditions, each in one category above (category()); their names are the
  // "error.code" of --json, documented in docs/ERRORS.md.
  nothing_active,         // 2: env/verify/backup/smoke with no generation active
  nothing_to_roll_back,   // 2: rollback with nothing active or nothing before the active one
  no_such_generation,     // 2: rollback --to N of a generation that does not exist
  not_installed,          // 2: use/remove of a version that is not in the store
  is_active,              // 2: remove of the active version
  unknown_version,        // 2: a VERSION no mirror serves and cudnnctl does not know
  no_cuda_build,          // 7: the release has no build for the CUDA major this host needs
  mirror_not_found,       // 3: a release cudnnctl knows, 404 on every mirror
  mirror_not_manifest,    // 3: a mirror answered something else (an HTML page) for a manifest
  needs_root,             // 2: --user mode refuses what only the system mode does (adopt)
  confirmation_required,  // 2: purge without --yes (and not a dry run)
  framework_incompatible, // 7: the switch would break a framework on the node (the framework gate)
};

// The category of the exit-code table `code` belongs to (itself for the categories).
ErrorCode category(ErrorCode code);
// Every code, categories first: what docs/ERRORS.md lists (cudnnctl_unit checks it).
const std::vector<ErrorCode>& all_error_codes();

// The documented process exit code for `code`.
int exit_code(ErrorCode code);
// Stable lower-case name used as "error.code" in --json output ("error.category" is the
// name of category(code)).
const char* code_name(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;
  // Outer context added on the way up ("installing 9.2.0"), innermost first.
  std::vector<std::string> context;

  Error() = default;
  Error(ErrorCode c, std::string m) : code(c), message(std::move(m)) {}

  // Returns *this with `what` appended as the next outer context.
  Error& add_context(std::string what) {
    context.push_back(std::move(what));
    return *this;
  }
  // "outer: inner: message".
  [[nodiscard]] std::string full_message() const;
};

template <typename T> using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

// Builds the unexpected value returned by failing functions.
inline std::unexpected<Error> fail(ErrorCode code, std::string message) {
  return std::unexpected<Error>(Error(code, std::move(message)));
}
inline std::unexpected<Error> fail(Error error) {
  return std::unexpected<Error>(std::move(error));
}

// An Error for a failed system call: "what: strerror(err)". ENOSPC, EROFS, EACCES,
// EPERM, EDQUOT and friends map to ErrorCode::environment; everything else too, unless
// `code` says otherwise.
Error errno_error(std::string_view what, int err, ErrorCode code = ErrorCode::environment);
inline std::unexpected<Error> fail_errno(std::string_view what, int err,
                                         ErrorCode code = ErrorCode::environment) {
  return std::unexpected<Error>(errno_error(what, err, code));
}

} // namespace cudnnctl::core

namespace cudnnctl {
using core::all_error_codes;
using core::category;
using core::code_name;
using core::errno_error;
using core::Error;
using core::ErrorCode;
using core::exit_code;
using core::fail;
using core::fail_errno;
using core::Result;
using core::Status;
} // namespace cudnnctl

#define CUDNNCTL_CONCAT_INNER(a, b) a##b
#define CUDNNCTL_CONCAT(a, b) CUDNNCTL_CONCAT_INNER(a, b)

// TRY(expr): evaluate a Result/Status; on error return it from the enclosing function.
#define TRY(...)                                                                                   \
  do {                                                                                             \
    auto&& try_result_ = (__VA_ARGS__);                                                            \
    if (!try_result_) {                                                                            \
      return ::std::unexpected<::cudnnctl::core::Error>(std::move(try_result_).error());           \
    }                                                                                              \
  } while (false)

// TRY_CTX(expr, "context"): like TRY, adding context to the error on the way up.
#define TRY_CTX(expr, ctx)                                                                         \
  do {                                                                                             \
    auto&& try_result_ = (expr);                                                                   \
    if (!try_result_) {                                                                            \
      auto try_error_ = std::move(try_result_).error();                                            \
      try_error_.add_context(ctx);                                                                 \
      return ::std::unexpected<::cudnnctl::core::Error>(std::move(try_error_));                    \
    }                                                                                              \
  } while (false)

// TRY_ASSIGN(decl, expr): `decl = *expr` or return the error. decl may be `auto x`.
#define TRY_ASSIGN(decl, ...)                                                                      \
  TRY_ASSIGN_IMPL(CUDNNCTL_CONCAT(try_tmp_, __LINE__), decl, __VA_ARGS__)
#define TRY_ASSIGN_IMPL(tmp, decl, ...)                                                            \
  auto&& tmp = (__VA_ARGS__);                                                                      \
  if (!tmp) {                                                                                      \
    return ::std::unexpected<::cudnnctl::core::Error>(std::move(tmp).error());                     \
  }                                                                                                \
  decl = std::move(*tmp)
