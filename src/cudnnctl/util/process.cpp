// SPDX-License-Identifier: Apache-2.0
#include "util/process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace cudnnctl::util {

std::string ProcessResult::describe() const {
  if (timed_out) {
    return "timed out";
  }
  if (detached) {
    return "ended (not waited for)";
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

namespace {

void close_pair(const int (&fds)[2]) {
  ::close(fds[0]);
  ::close(fds[1]);
}

void close_fd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

} // namespace

Result<Child> Child::start(const ProcessOptions& options) {
  if (options.argv.empty()) {
    return fail(ErrorCode::internal, "run_process: empty argv");
  }
  int in_pipe[2];
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) {
    return fail_errno("pipe", errno);
  }
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    close_pair(in_pipe);
    return fail_errno("pipe", e);
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    close_pair(in_pipe);
    close_pair(out_pipe);
    return fail_errno("pipe", e);
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
  // posix_spawnp, not fork: glibc starts the child with clone(CLONE_VM|CLONE_VFORK), so no
  // page table of this process (40-odd shared libraries mapped) is copied for a child that
  // execs at once, and an exec failure comes back as its return value. The child: its own
  // process group, the pipes as 0/1/2 (dup2 clears their close-on-exec), SIGPIPE and SIGXFSZ
  // at their defaults (we ignore both).
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attr);
  ::posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  ::posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  ::posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGXFSZ);
  ::posix_spawnattr_setsigdefault(&attr, &defaults);
  ::posix_spawnattr_setpgroup(&attr, 0);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int spawn_err = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(),
                                 options.env ? envp.data() : environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (spawn_err != 0) {
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return fail_errno("cannot run " + options.argv[0], spawn_err);
  }
  return Child(pid, in_pipe[1], out_pipe[0], err_pipe[0], options.max_output);
}

Child::Child(Child&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)), m_detached(other.m_detached),
      m_in(std::exchange(other.m_in, -1)), m_out(std::exchange(other.m_out, -1)),
      m_err(std::exchange(other.m_err, -1)), m_max_output(other.m_max_output),
      m_so_far(std::move(other.m_so_far)) {}

Child::~Child() {
  close_stdin();
  if (m_pid > 0) {
    ::kill(-m_pid, SIGKILL);
    if (m_detached) {
      int status = 0;
      (void)::waitpid(m_pid, &status, WNOHANG); // still exiting: init reaps it after us
    } else {
      (void)wait(std::chrono::milliseconds(0));
    }
  }
  close_fd(m_out);
  close_fd(m_err);
}

bool Child::write_stdin(std::string_view data) {
  while (!data.empty() && m_in >= 0) {
    ssize_t n = ::write(m_in, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return data.empty();
}

int Child::dup_stdin() const {
  return m_in >= 0 ? ::fcntl(m_in, F_DUPFD_CLOEXEC, 0) : -1;
}

void Child::close_stdin() {
  close_fd(m_in);
}

ProcessResult Child::wait(std::chrono::milliseconds timeout) {
  return wait(timeout, nullptr);
}

Child::Pumped Child::pump(std::chrono::steady_clock::time_point deadline,
                          const std::function<bool(const std::string&)>& stop_when) {
  struct pollfd fds[2] = {{m_out, POLLIN, 0}, {m_err, POLLIN, 0}};
  int* owned[2] = {&m_out, &m_err}; // closed once, here or in wait(), never twice
  std::string* sinks[2] = {&m_so_far.out, &m_so_far.err};
  int open_count = (m_out >= 0) + (m_err >= 0);
  char buf[65536];
  while (open_count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return Pumped::timed_out;
    }
    int rc = ::poll(fds, 2, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (rc < 0 && errno != EINTR) {
      break;
    }
    bool stopped = false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n > 0) {
          if (sinks[i]->size() < m_max_output) {
            sinks[i]->append(buf, static_cast<size_t>(n));
          }
          stopped = stopped || (i == 0 && stop_when && stop_when(m_so_far.out));
        } else if (n == 0 || (n < 0 && errno != EINTR)) {
          close_fd(*owned[i]);
          fds[i].fd = -1;
          --open_count;
        }
      }
    }
    if (stopped) {
      return Pumped::stopped;
    }
  }
  return Pumped::closed;
}

bool Child::read_until(std::chrono::milliseconds timeout,
                       const std::function<bool(const std::string&)>& said, std::string& out) {
  const bool stopped =
      m_pid > 0 && pump(std::chrono::steady_clock::now() + timeout, said) == Pumped::stopped;
  out = m_so_far.out;
  return stopped;
}

ProcessResult Child::wait(std::chrono::milliseconds timeout,
                          const std::function<bool(const std::string&)>& stop_when) {
  if (m_pid <= 0) {
    ProcessResult result;
    result.timed_out = true; // waited before: nothing more to say
    return result;
  }
  const pid_t pid = m_pid;
  const Pumped pumped = pump(std::chrono::steady_clock::now() + timeout, stop_when);
  ProcessResult result = std::exchange(m_so_far, ProcessResult{});
  if (pumped == Pumped::timed_out) {
    result.timed_out = true;
    ::kill(-pid, SIGKILL);
  }
  close_fd(m_out);
  close_fd(m_err);
  close_stdin();
  if (pumped == Pumped::stopped) {
    result.detached = true;
    m_detached = true;
    return result;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  m_pid = -1;
  // A grandchild that kept the group alive after a timeout is gone too.
  if (result.timed_out) {
    ::kill(-pid, SIGKILL);
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
  return result;
}

Result<ProcessResult> run_process(const ProcessOptions& options) {
  TRY_ASSIGN(Child child, Child::start(options));
  child.close_stdin(); // end of file at once, as /dev/null gave before
  return child.wait(options.timeout);
}

} // namespace cudnnctl::util
