// SPDX-License-Identifier: Apache-2.0
#include "smoke/runner.hpp"

#include "smoke/json_lines.hpp"
#include "util/enum_name.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace cudnnctl::smoke {

using nlohmann::json;

namespace {

std::string gpu_label(const GpuResult& g) {
  std::string s = "GPU " + std::to_string(g.gpu);
  if (!g.name.empty()) {
    s += " (" + g.name + (g.compute_capability.empty() ? "" : ", sm " + g.compute_capability) + ")";
  }
  return s;
}

std::string died(const util::ProcessResult& p, std::chrono::seconds timeout) {
  if (p.timed_out) {
    return "timed out after " + std::to_string(timeout.count()) + " s and was killed";
  }
  return "was " + p.describe();
}

Result<util::ProcessResult> run_helper(std::vector<std::string> args,
                                       std::chrono::seconds timeout) {
  TRY_ASSIGN(std::string helper, find_helper());
  args.insert(args.begin(), helper);
  util::ProcessOptions o;
  o.argv = std::move(args);
  o.env = helper_env();
  o.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  return util::run_process(o);
}

} // namespace

const char* outcome_name(Outcome o) {
  static constexpr util::EnumName<Outcome> k_names[] = {
      {Outcome::passed, "passed"}, {Outcome::failed, "failed"}, {Outcome::skipped, "skipped"}};
  return util::enum_name(o, k_names, "failed");
}

Result<std::string> find_child(const char* name, const char* env_var) {
  const char* env = std::getenv(env_var);
  std::string path;
  if (env && *env) {
    path = env;
  } else {
    std::string self = util::self_exe();
    auto slash = self.rfind('/');
    if (slash == std::string::npos) {
      return fail(ErrorCode::environment,
                  "cannot locate the running executable to find " + std::string(name));
    }
    // Beside cudnnctl (the build tree, a relocatable bundle), else where the installed
    // layout puts it: <bindir>/../libexec/cudnnctl/ (/usr/libexec/cudnnctl in the .deb).
    std::string dir = self.substr(0, slash + 1);
    path = dir + name;
    std::string libexec = dir + "../libexec/cudnnctl/" + name;
    if (::access(path.c_str(), X_OK) != 0 && ::access(libexec.c_str(), X_OK) == 0) {
      path = libexec;
    }
  }
  if (::access(path.c_str(), X_OK) != 0) {
    return fail(ErrorCode::environment,
                std::string(name) + " not found at " + path +
                    " (it is installed beside cudnnctl or in ../libexec/cudnnctl/; reinstall "
                    "cudnnctl, or set " +
                    env_var + ")");
  }
  return path;
}

Result<std::string> find_helper() {
  return find_child(k_helper_name, "CUDNNCTL_SMOKE_HELPER");
}

std::vector<std::string> helper_env() {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    env.push_back(std::string("CUDA_VISIBLE_DEVICES=") + v);
  }
  // Containers often reach the NVIDIA driver only through LD_LIBRARY_PATH (e.g.
  // /usr/local/nvidia/lib64). Keep exactly those entries: directories holding libcuda.so.1
  // and no libcudnn*, so the driver is found and no other cuDNN can be.
  if (const char* llp = std::getenv("LD_LIBRARY_PATH")) {
    std::vector<std::string> keep;
    for (const auto& dir : util::split(llp, ':')) {
      if (dir.empty() || dir[0] != '/' || ::access((dir + "/libcuda.so.1").c_str(), R_OK) != 0) {
        continue;
      }
      bool has_cudnn = false;
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        if (e.path().filename().string().starts_with("libcudnn")) {
          has_cudnn = true;
          break;
        }
      }
      if (!has_cudnn && !ec) {
        keep.push_back(dir);
      }
    }
    if (!keep.empty()) {
      env.push_back("LD_LIBRARY_PATH=" + util::join(keep, ":"));
    }
  }
  return env;
}

json to_json(const SmokeResult& r) {
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json gpus = json::array();
  for (const auto& g : r.gpus) {
    json ops = json::array();
    for (const auto& op : g.ops) {
      ops.push_back({{"op", op.op},
                     {"api", op.api},
                     {"what", op.what},
                     {"status", op.status},
                     {"max_error", opt(op.max_error)},
                     {"error_ratio", opt(op.error_ratio)},
                     {"ms", op.ms},
                     {"detail", op.detail},
                     {"message", op.message}});
    }
    gpus.push_back({{"gpu", g.gpu},
                    {"name", g.name},
                    {"compute_capability", g.compute_capability},
                    {"memory_bytes", g.memory_bytes},
                    {"uuid", g.uuid},
                    {"pci_bus_id", g.pci_bus_id},
                    {"mig", g.mig},
                    {"cudnn_version", g.cudnn_version},
                    {"status", g.status},
                    {"max_error", opt(g.max_error)},
                    {"ms", g.ms},
                    {"message", g.message},
                    {"ops", ops}});
  }
  return {{"status", outcome_name(r.outcome)},
          {"no_gpu", r.no_gpu},
          {"message", r.message},
          {"gpus", gpus},
          {"cudnn_version", r.cudnn_version ? json(*r.cudnn_version) : json(nullptr)},
          {"driver_version", r.driver_version ? json(*r.driver_version) : json(nullptr)},
          {"kernel_driver", r.kernel_driver ? json(*r.kernel_driver) : json(nullptr)},
          {"ms", r.ms},
          {"helper", r.helper}};
}

SmokeResult parse_smoke(const util::ProcessResult& p, std::chrono::seconds timeout) {
  SmokeResult r;
  std::string no_gpu_message;
  std::string fail_message;
  int testing = -1;          // the GPU the helper announced and has not reported yet
  std::string testing_op;    // the operation it announced last on that GPU
  std::vector<OpResult> ops; // operation lines of the GPU being tested
  bool summary = false;
  for (const auto& j : json_lines(p.out)) {
    if (auto v = long_of(j, "cudnn_version")) {
      r.cudnn_version = v;
    }
    if (str_of(j, "event") == "testing") {
      int gpu = static_cast<int>(long_of(j, "gpu").value_or(-1));
      if (gpu != testing) {
        ops.clear();
      }
      testing = gpu;
      testing_op = str_of(j, "op");
      continue;
    }
    if (j.contains("summary")) {
      summary = true;
      if (auto v = long_of(j, "driver_version")) {
        r.driver_version = static_cast<int>(*v);
      }
      if (j.contains("kernel_driver")) {
        r.kernel_driver = str_of(j, "kernel_driver");
      }
      r.ms = number_of(j, "ms").value_or(0);
      continue;
    }
    if (auto gpu = long_of(j, "gpu"); gpu && j.contains("status") && j.contains("op")) {
      ops.push_back(OpResult{.op = str_of(j, "op"),
                             .api = str_of(j, "api"),
                             .what = str_of(j, "what"),
                             .status = str_of(j, "status"),
                             .max_error = number_of(j, "max_error"),
                             .error_ratio = number_of(j, "error_ratio"),
                             .ms = number_of(j, "ms").value_or(0),
                             .detail = str_of(j, "detail"),
                             .message = str_of(j, "message")});
      testing_op.clear();
      continue;
    }
    if (auto gpu = long_of(j, "gpu"); gpu && j.contains("status")) {
      GpuResult g;
      g.gpu = static_cast<int>(*gpu);
      g.name = str_of(j, "name");
      g.compute_capability = str_of(j, "compute_capability");
      if (auto mem = number_of(j, "memory_bytes")) {
        g.memory_bytes = static_cast<unsigned long long>(*mem);
      }
      g.uuid = str_of(j, "uuid");
      g.pci_bus_id = str_of(j, "pci_bus_id");
      g.mig = str_of(j, "mig");
      g.cudnn_version = long_of(j, "cudnn_version").value_or(0);
      g.status = str_of(j, "status");
      g.max_error = number_of(j, "max_error");
      g.ms = number_of(j, "ms").value_or(0);
      g.message = str_of(j, "message");
      if (testing == g.gpu) {
        testing = -1;
        g.ops = std::move(ops);
      }
      ops.clear();
      r.gpus.push_back(std::move(g));
      continue;
    }
    std::string status = str_of(j, "status");
    if (status == "no-gpu") {
      no_gpu_message = str_of(j, "message");
    } else if (status == "failed") {
      fail_message = str_of(j, "message");
    }
  }
  auto with_status = [&](const char* s) {
    std::vector<std::string> out;
    for (const auto& g : r.gpus) {
      if (g.status == s) {
        out.push_back(gpu_label(g) + ": " + g.message);
      }
    }
    return util::join(out, "; ");
  };
  if (p.timed_out || p.term_signal != 0) {
    r.outcome = Outcome::failed;
    r.message = "the smoke helper " + died(p, timeout);
    if (testing >= 0) {
      r.message += " while testing GPU " + std::to_string(testing) +
                   (testing_op.empty() ? std::string() : " (" + testing_op + ")");
    }
    return r;
  }
  switch (p.exit_code) {
  case k_helper_passed: {
    size_t passed = 0;
    std::vector<std::string> names;
    for (const auto& g : r.gpus) {
      if (g.status == "passed" || g.status == "usable") {
        ++passed;
        names.push_back(gpu_label(g));
      }
    }
    if (passed == 0 || !summary) {
      r.outcome = Outcome::failed;
      r.message = "the smoke helper exited 0 without reporting a passed GPU (output: " +
                  std::string(util::trim(p.out.substr(0, 200))) + ")";
      break;
    }
    r.outcome = Outcome::passed;
    r.message = std::to_string(passed) + " GPU(s) passed: " + util::join(names, ", ");
    if (auto skipped = with_status("skipped"); !skipped.empty()) {
      r.message += "; skipped " + skipped;
    }
    break;
  }
  case k_helper_no_gpu:
    r.outcome = Outcome::skipped;
    r.no_gpu = true;
    r.message = "no GPU" + (no_gpu_message.empty() ? std::string() : ": " + no_gpu_message);
    break;
  case k_helper_unusable:
    r.outcome = Outcome::skipped;
    r.message = "no usable GPU: " + with_status("skipped");
    break;
  case k_helper_failed:
    r.outcome = Outcome::failed;
    if (auto failed = with_status("failed"); !failed.empty()) {
      r.message = failed;
    } else if (!fail_message.empty()) {
      r.message = fail_message;
    } else {
      r.message = "the smoke helper failed: " + last_line(p.err);
    }
    break;
  default:
    r.outcome = Outcome::failed;
    r.message = "the smoke helper exited with status " + std::to_string(p.exit_code) +
                (p.err.empty() ? std::string() : ": " + last_line(p.err));
    break;
  }
  return r;
}

Result<SmokeResult> run_smoke(const std::filesystem::path& shim, std::optional<long> expect,
                              std::chrono::seconds timeout) {
  std::vector<std::string> args = {"--smoke", shim.string()};
  if (expect) {
    args.push_back("--expect");
    args.push_back(std::to_string(*expect));
  }
  TRY_ASSIGN(util::ProcessResult p, run_helper(args, timeout));
  SmokeResult r = parse_smoke(p, timeout);
  r.helper = find_helper().value_or("");
  return r;
}

Result<SmokeResult> run_gpu_presence(std::chrono::seconds timeout) {
  TRY_ASSIGN(util::ProcessResult p, run_helper({"--gpus"}, timeout));
  SmokeResult r = parse_smoke(p, timeout);
  r.helper = find_helper().value_or("");
  return r;
}

ProbeResult parse_probe(const util::ProcessResult& p, std::chrono::seconds timeout) {
  ProbeResult r;
  std::string loading;
  for (const auto& j : json_lines(p.out)) {
    std::string ev = str_of(j, "event");
    if (ev == "loading") {
      loading = str_of(j, "file");
    } else if (ev == "loaded") {
      r.loaded.emplace_back(str_of(j, "file"), str_of(j, "path"));
      loading.clear();
    } else if (ev == "error") {
      r.errors.emplace_back(str_of(j, "file"), str_of(j, "message"));
      loading.clear();
    } else if (ev == "version") {
      r.getversion = long_of(j, "getversion");
      r.cudart = long_of(j, "cudart");
    } else if (ev == "check") {
      ProbeCheck c;
      c.file = str_of(j, "file");
      c.function = str_of(j, "function");
      c.found = j.value("found", false);
      c.status = static_cast<int>(long_of(j, "status").value_or(0));
      r.checks.push_back(std::move(c));
    } else if (ev == "foreign") {
      r.foreign.push_back(str_of(j, "path"));
    } else if (ev == "done") {
      r.completed = true;
    } else if (ev == "exit") {
      r.exit_reported = long_of(j, "status");
    } else if (ev == "warm") {
      r.warm_ms = j.value("ms", 0.0);
      r.warm_driver = j.value("driver", false);
      r.warm_context = j.value("context", false);
    }
  }
  if (!r.completed) {
    r.crashed_in = loading;
  }
  r.process_ok = p.ok() || (p.detached && r.exit_reported == 0);
  r.process = (p.timed_out || p.term_signal) ? died(p, timeout) : p.describe();
  if (p.detached) {
    r.process = "exit status " + std::to_string(r.exit_reported.value_or(-1)) +
                " (reported once its exit handlers ran)";
  }
  if (!r.process_ok && !p.err.empty()) {
    r.process += " (" + last_line(p.err) + ")";
  }
  return r;
}

namespace {

std::vector<std::string> probe_args(const ProbeRequest& req) {
  std::vector<std::string> args = {"--probe", req.dir.string(), "--shim", req.shim};
  for (const auto& f : req.load) {
    args.push_back("--load");
    args.push_back(f);
  }
  for (const auto& [file, function] : req.checks) {
    args.push_back("--check");
    args.push_back(file + ":" + function);
  }
  return args;
}

} // namespace

Result<ProbeResult> run_probe(const ProbeRequest& req, std::chrono::seconds timeout) {
  TRY_ASSIGN(util::ProcessResult p, run_helper(probe_args(req), timeout));
  return parse_probe(p, timeout);
}

struct WarmHelper::Early {
  std::mutex mutex;
  util::Fd in;                   // dup_stdin(): writes from the pass's threads
  std::filesystem::path dir;     // of the files sent, once one was
  std::vector<std::string> sent; // in the order sent, the shim first
  bool broken = false;           // a write failed, or the tree was discarded
};

WarmHelper::WarmHelper(util::Child child)
    : m_child(std::move(child)), m_early(std::make_unique<Early>()) {
  m_early->in = util::Fd(m_child.dup_stdin());
}

WarmHelper::WarmHelper(WarmHelper&&) noexcept = default;
WarmHelper::~WarmHelper() = default;

bool WarmHelper::send_early(const std::filesystem::path& dir, const std::string& file, EarlyAs as) {
  std::lock_guard lock(m_early->mutex);
  Early& e = *m_early;
  const bool first = e.sent.empty();
  if (e.broken || !e.in || (!first && dir != e.dir) || file.find('\n') != std::string::npos ||
      dir.string().find('\n') != std::string::npos) {
    return false;
  }
  std::string lines = (first ? "dir " + dir.string() + "\n" : std::string()) +
                      (as == EarlyAs::shim ? "shim " : "load ") + file + "\n";
  if (!util::write_all(e.in.get(), lines.data(), lines.size(), "the GPU child's input")) {
    e.broken = true; // it is gone: probe() judges what it said
    return false;
  }
  e.dir = dir;
  e.sent.push_back(file);
  return true;
}

void WarmHelper::discard_early() {
  std::lock_guard lock(m_early->mutex);
  m_early->broken = true;
}

Result<WarmHelper> WarmHelper::start() {
  TRY_ASSIGN(std::string helper, find_helper());
  util::ProcessOptions o;
  o.argv = {helper, "--warm"};
  o.env = helper_env();
  TRY_ASSIGN(util::Child child, util::Child::start(o));
  return WarmHelper(std::move(child));
}

namespace {

// The last complete line of `out` is the helper's event `event`.
bool last_event_is(const std::string& out, const char* event) {
  if (out.empty() || out.back() != '\n') {
    return false; // a line still coming
  }
  const auto last = json_lines(last_line(out));
  return !last.empty() && str_of(last.front(), "event") == event;
}

// Where the complete line that is the helper's event `event` ends in `out` (npos: none yet).
size_t end_of_event(const std::string& out, const char* event) {
  size_t start = 0;
  for (size_t nl = out.find('\n'); nl != std::string::npos; nl = out.find('\n', start)) {
    const auto line = json_lines(out.substr(start, nl - start));
    if (!line.empty() && str_of(line.front(), "event") == event) {
      return nl + 1;
    }
    start = nl + 1;
  }
  return std::string::npos;
}

} // namespace

SmokeResult WarmHelper::inventory(std::chrono::seconds timeout) {
  std::string out;
  // Not the last line: files sent early (send_early) are loaded, and said so, right after it.
  m_waiting = m_child.read_until(
      timeout,
      [](const std::string& so_far) { return end_of_event(so_far, "warm") != std::string::npos; },
      out);
  util::ProcessResult p;
  if (m_waiting) {
    // Waiting: the exit status --gpus would have given, from its lines (up to "warm").
    out.resize(end_of_event(out, "warm"));
    p.out = std::move(out);
    p.exit_code = k_helper_failed;
    for (const auto& j : json_lines(p.out)) {
      if (j.contains("summary")) {
        p.exit_code = str_of(j, "status") == "usable" ? k_helper_passed : k_helper_unusable;
      } else if (str_of(j, "status") == "no-gpu") {
        p.exit_code = k_helper_no_gpu;
      }
    }
  } else {
    // It died, or hangs in the driver: judged as --gpus would be (killed when it hangs).
    p = m_child.wait(std::chrono::milliseconds(0));
  }
  SmokeResult r = parse_smoke(p, timeout);
  r.helper = find_helper().value_or("");
  return r;
}

std::optional<ProbeResult> WarmHelper::probe(const ProbeRequest& request,
                                             std::chrono::seconds timeout) {
  std::lock_guard lock(m_early->mutex);
  Early& early = *m_early;
  m_declined.clear();
  auto decline = [&](std::string why) -> std::optional<ProbeResult> {
    m_declined = std::move(why);
    return std::nullopt;
  };
  if (!m_waiting) {
    return decline("it did not report its inventory whole");
  }
  if (!early.sent.empty() && early.broken) {
    return decline("it loaded files of a tree that was discarded, or stopped reading");
  }
  if (!early.sent.empty() && early.dir != request.dir) {
    return decline("it loaded files of another directory");
  }
  auto unsent = [&](const std::string& f) {
    return std::find(early.sent.begin(), early.sent.end(), f) == early.sent.end();
  };
  std::string lines;
  size_t expected = request.checks.size();
  if (early.sent.empty()) {
    lines = "dir " + request.dir.string() + "\n";
    ++expected;
  }
  for (const auto& f : request.load) {
    if (unsent(f)) {
      lines += "load " + f + "\n";
      ++expected;
    }
  }
  if (unsent(request.shim)) {
    lines += "shim " + request.shim + "\n"; // last: it loads libcudnn_graph itself
    ++expected;
  }
  for (const auto& [file, function] : request.checks) {
    lines += "check " + file + ":" + function + "\n";
  }
  if (std::count(lines.begin(), lines.end(), '\n') != static_cast<long>(expected)) {
    return decline("a file name holds a newline");
  }
  m_waiting = false;
  early.broken = true; // used
  // A child that is gone already cannot take the request: its output and exit status say
  // what happened.
  (void)m_child.write_stdin(lines + "go\n");
  m_child.close_stdin();
  (void)early.in.close();
  return parse_probe(
      m_child.wait(std::chrono::duration_cast<std::chrono::milliseconds>(timeout),
                   [](const std::string& out) { return last_event_is(out, "exit"); }),
      timeout);
}

Result<WhichResult> run_which(const std::string& soname, std::chrono::seconds timeout) {
  TRY_ASSIGN(util::ProcessResult p, run_helper({"--which", soname}, timeout));
  WhichResult w;
  w.soname = soname;
  for (const auto& j : json_lines(p.out)) {
    if (str_of(j, "soname") != soname) {
      continue;
    }
    if (j.contains("path")) {
      w.path = str_of(j, "path");
      w.real = str_of(j, "real");
    } else {
      w.error = str_of(j, "error");
    }
  }
  if (!w.path && w.error.empty()) {
    w.error = "the loader check helper " +
              ((p.timed_out || p.term_signal) ? died(p, timeout) : p.describe()) +
              (p.err.empty() ? std::string() : ": " + last_line(p.err));
  }
  return w;
}

} // namespace cudnnctl::smoke
