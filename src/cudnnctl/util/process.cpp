// SPDX-License-Identifier: Apache-2.0
#include "util/process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace cudnnctl::util {

std::string ProcessResult::describe() const {
  if (timed_out) {
    return "timed out";
  }
  if (term_signal != 0) {
    return "killed by signal " + std::to_string(term_signal) + " (" + ::strsignal(term_signal) +
           ")";
  }
  return "exit status " + std::to_string(exit_code);
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) {
    return {};
  }
  return std::string(buf, static_cast<size_t>(n));
}

Result<ProcessResult> run_process(const ProcessOptions& options) {
  if (options.argv.empty()) {
    return fail(ErrorCode::internal, "run_process: empty argv");
  }
  int out_pipe[2];
  int err_pipe[2];
  int exec_pipe[2]; // reports exec failure to the parent
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    return fail_errno("pipe", errno);
  }
  std::vector<char*> argv;
  for (const auto& a : options.argv) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (options.env) {
    for (const auto& e : *options.env) {
      envp.push_back(const_cast<char*>(e.c_str()));
    }
    envp.push_back(nullptr);
  }

  pid_t pid = ::fork();
  if (pid < 0) {
    return fail_errno("fork", errno);
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
      ::dup2(devnull, 0);
    }
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGXFSZ, SIG_DFL);
    if (options.env) {
      ::execvpe(argv[0], argv.data(), envp.data());
    } else {
      ::execvp(argv[0], argv.data());
    }
    int err = errno;
    (void)!::write(exec_pipe[1], &err, sizeof err);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);

  ProcessResult result;
  auto deadline = std::chrono::steady_clock::now() + options.timeout;
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_count = 2;
  char buf[65536];
  while (open_count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    int rc = ::poll(fds, 2, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (rc < 0 && errno != EINTR) {
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n > 0) {
          if (sinks[i]->size() < options.max_output) {
            sinks[i]->append(buf, static_cast<size_t>(n));
          }
        } else if (n == 0 || (n < 0 && errno != EINTR)) {
          ::close(fds[i].fd);
          fds[i].fd = -1;
          --open_count;
        }
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) {
      ::close(f.fd);
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // A grandchild that kept the group alive after a timeout is gone too.
  if (result.timed_out) {
    ::kill(-pid, SIGKILL);
  }
  int exec_err = 0;
  ssize_t n = ::read(exec_pipe[0], &exec_err, sizeof exec_err);
  ::close(exec_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof exec_err)) {
    return fail_errno("cannot run " + options.argv[0], exec_err);
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
  return result;
}

} // namespace cudnnctl::util
