// SPDX-License-Identifier: Apache-2.0
// Runs a child process with captured output and a timeout (ldconfig, the smoke helper,
// the runtime version probe). A crashing or hanging child cannot take the caller down.
#pragma once

#include "core/result.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace cudnnctl::util {

// --- Interface ---

struct ProcessOptions {
  std::vector<std::string> argv; // argv[0] is looked up in PATH when it has no '/'
  // When set, the child gets exactly this environment; otherwise it inherits ours.
  std::optional<std::vector<std::string>> env;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  size_t max_output = 4u << 20; // bytes kept of each of stdout and stderr
};

struct ProcessResult {
  int exit_code = -1;  // valid when exited normally
  int term_signal = 0; // nonzero when killed by a signal
  bool timed_out = false;
  // wait()'s `stop_when` matched: the child said it was ending and was not waited for (no
  // exit status: exit_code -1, term_signal 0).
  bool detached = false;
  std::string out;
  std::string err;
  [[nodiscard]] bool ok() const { return !timed_out && term_signal == 0 && exit_code == 0; }
  // "exit status 3", "killed by signal 11 (Segmentation fault)", "timed out after 30 s".
  [[nodiscard]] std::string describe() const;
};

// Runs the child in its own process group; on timeout the whole group gets SIGKILL.
// Errors only when the child cannot be started (ErrorCode::environment).
[[nodiscard]] Result<ProcessResult> run_process(const ProcessOptions& options);

// A child started now and waited for later (the runtime probe started before the one pass):
// its stdin is a pipe the parent writes to, stdout and stderr are captured as by run_process
// (options.timeout is not used: wait() takes its own). Not waited for: the destructor closes
// stdin, kills the child's process group and reaps it (without blocking once detached).
class Child {
public:
  // Errors only when the child cannot be started (ErrorCode::environment).
  [[nodiscard]] static Result<Child> start(const ProcessOptions& options);
  Child(Child&& other) noexcept;
  Child& operator=(Child&&) = delete;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();

  // All of `data` to the child's stdin; false when it cannot take it (it exited or closed
  // stdin: SIGPIPE is ignored by the caller, so EPIPE comes back here).
  [[nodiscard]] bool write_stdin(std::string_view data);
  void close_stdin();
  // A second descriptor of the child's stdin (close-on-exec), for writes from another thread
  // than the one that reads, waits and closes; the child sees the end of its input only once
  // both are closed. -1 when stdin is closed or dup fails.
  [[nodiscard]] int dup_stdin() const;
  // Collects the output until the child closes both pipes or `timeout` (from now) passes
  // (then its process group gets SIGKILL), and reaps it. Once only.
  [[nodiscard]] ProcessResult wait(std::chrono::milliseconds timeout);
  // The same, but it also stops as soon as `stop_when(stdout so far)` is true: the child has
  // said all it will (the runtime probe: its exit handlers ran) and is not waited for
  // (result.detached). The destructor then reaps it if it has exited, else leaves it to be
  // reaped by init once this process exits (it is in the kernel's part of its exit).
  [[nodiscard]] ProcessResult wait(std::chrono::milliseconds timeout,
                                   const std::function<bool(const std::string&)>& stop_when);
  // Reads until `said(stdout so far)` is true (install's GPU child: its inventory is in,
  // and it waits for the probe's request), `timeout` from now: true, the child left running
  // with its pipes open, the output kept for a later wait(), whose result holds everything
  // from the start. False when the child closed its output or the time ran out first
  // (nothing is killed or reaped: wait() does that). `out` is the stdout so far, either way.
  [[nodiscard]] bool read_until(std::chrono::milliseconds timeout,
                                const std::function<bool(const std::string&)>& said,
                                std::string& out);

private:
  Child(pid_t pid, int in, int out, int err, size_t max_output)
      : m_pid(pid), m_in(in), m_out(out), m_err(err), m_max_output(max_output) {}
  enum class Pumped { stopped, closed, timed_out };
  // Appends what the child writes to m_so_far until `stop_when` matches, both pipes close or
  // `deadline` passes.
  Pumped pump(std::chrono::steady_clock::time_point deadline,
              const std::function<bool(const std::string&)>& stop_when);
  pid_t m_pid = -1; // -1 once reaped
  bool m_detached = false;
  int m_in = -1;
  int m_out = -1;
  int m_err = -1;
  size_t m_max_output = 0;
  ProcessResult m_so_far; // the output read so far (out, err)
};

// Path of the running executable (/proc/self/exe).
[[nodiscard]] std::string self_exe();

} // namespace cudnnctl::util
