// SPDX-License-Identifier: Apache-2.0
// End-to-end driver of the fetch module for tests/fetchtool/test_fetch.sh. Prints one JSON
// line and exits with the ErrorCode's exit code.
//   cudnnctl_fetchtool first [OPTIONS] [--accept-sha256 H] BASE... -- FILENAME
//   cudnnctl_fetchtool archive --sha256 H --size N --cache DIR [OPTIONS] [--sink FILE] URL...
// OPTIONS: --cacert F, --attempts N, --backoff-ms N, --backoff-max-ms N,
//          --connect-timeout S, --low-speed-limit N, --low-speed-time S, --max-size N,
//          --progress (progress lines on stderr)
// --sink FILE writes the streamed bytes to FILE (truncated at every restart), so a test can
// check that the stream delivered exactly the archive.
#include "fetch/fetch.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace cudnnctl;

namespace {

struct Args {
  std::string command;
  fetch::Options options;
  std::vector<std::string> positional;
  std::string filename; // first: after "--"
  std::string sha256;
  uint64_t size = 0;
  std::string cache;
  std::string sink_file;
  std::string accept_sha256;
  size_t max_size = 64u << 20;
};

int usage(const std::string& why) {
  nlohmann::json out{{"ok", false}, {"error", {{"code", "usage"}, {"message", why}}}};
  std::cout << out.dump() << "\n";
  return exit_code(ErrorCode::usage);
}

int report_error(const Error& error) {
  nlohmann::json out{
      {"ok", false},
      {"error", {{"code", code_name(error.code)}, {"message", error.full_message()}}}};
  std::cout << out.dump() << "\n";
  return exit_code(error.code);
}

std::optional<uint64_t> number(const std::string& s) {
  return util::parse_u64(s);
}

// Returns an error text, or empty when parsing succeeded.
std::string parse(int argc, char** argv, Args& args) {
  if (argc < 2) {
    return "missing command (first or archive)";
  }
  args.command = argv[1];
  bool after_dashes = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](uint64_t& out) -> bool {
      if (i + 1 >= argc) {
        return false;
      }
      auto v = number(argv[++i]);
      if (!v) {
        return false;
      }
      out = *v;
      return true;
    };
    auto text = [&](std::string& out) -> bool {
      if (i + 1 >= argc) {
        return false;
      }
      out = argv[++i];
      return true;
    };
    uint64_t n = 0;
    std::string s;
    if (after_dashes) {
      if (!args.filename.empty()) {
        return "only one FILENAME after --";
      }
      args.filename = a;
    } else if (a == "--") {
      after_dashes = true;
    } else if (a == "--cacert" && text(s)) {
      args.options.cacert = s;
    } else if (a == "--attempts" && value(n)) {
      args.options.attempts_per_mirror = static_cast<int>(n);
    } else if (a == "--backoff-ms" && value(n)) {
      args.options.backoff_base = std::chrono::milliseconds(n);
    } else if (a == "--backoff-max-ms" && value(n)) {
      args.options.backoff_max = std::chrono::milliseconds(n);
    } else if (a == "--connect-timeout" && value(n)) {
      args.options.connect_timeout = std::chrono::seconds(n);
    } else if (a == "--low-speed-limit" && value(n)) {
      args.options.low_speed_limit = static_cast<long>(n);
    } else if (a == "--low-speed-time" && value(n)) {
      args.options.low_speed_time = std::chrono::seconds(n);
    } else if (a == "--max-size" && value(n)) {
      args.max_size = static_cast<size_t>(n);
    } else if (a == "--progress") {
      args.options.progress = [](uint64_t done, uint64_t total) {
        std::cerr << "progress " << done << "/" << total << "\n";
      };
    } else if (a == "--sha256" && text(args.sha256)) {
    } else if (a == "--size" && value(args.size)) {
    } else if (a == "--cache" && text(args.cache)) {
    } else if (a == "--sink" && text(args.sink_file)) {
    } else if (a == "--accept-sha256" && text(args.accept_sha256)) {
    } else if (a.starts_with("--")) {
      return "bad option or missing value: " + a;
    } else {
      args.positional.push_back(a);
    }
  }
  return {};
}

int run_first(const Args& args) {
  if (args.positional.empty() || args.filename.empty()) {
    return usage("first needs BASE... -- FILENAME");
  }
  auto accept = [&](const std::string& bytes, const std::string& url) -> Status {
    if (!args.accept_sha256.empty() && util::sha256_hex(bytes) != args.accept_sha256) {
      return fail(ErrorCode::integrity, "rejected body from " + url + ": sha256 " +
                                            util::sha256_hex(bytes) + ", expected " +
                                            args.accept_sha256);
    }
    return {};
  };
  auto fetched =
      fetch::fetch_first(args.positional, args.filename, args.max_size, args.options, accept);
  if (!fetched) {
    return report_error(fetched.error());
  }
  nlohmann::json out{{"ok", true},
                     {"url", fetched->url},
                     {"size", fetched->bytes.size()},
                     {"sha256", util::sha256_hex(fetched->bytes)}};
  std::cout << out.dump() << "\n";
  return 0;
}

int run_archive(const Args& args) {
  if (args.positional.empty() || args.sha256.empty() || args.cache.empty()) {
    return usage("archive needs --sha256 H --size N --cache DIR URL...");
  }
  fetch::ArchiveRequest request{args.positional, args.sha256, args.size};
  std::ofstream sink_out;
  fetch::StreamSink sink;
  int restarts = 0;
  if (!args.sink_file.empty()) {
    sink.data = [&](const char* data, size_t size) -> Status {
      if (!sink_out.is_open()) {
        sink_out.open(args.sink_file, std::ios::binary | std::ios::trunc);
      }
      sink_out.write(data, static_cast<std::streamsize>(size));
      if (!sink_out) {
        return fail(ErrorCode::environment, "cannot write " + args.sink_file);
      }
      return {};
    };
    sink.restart = [&]() -> Status {
      ++restarts;
      sink_out.close();
      sink_out.open(args.sink_file, std::ios::binary | std::ios::trunc);
      return {};
    };
  }
  auto path = fetch::fetch_archive(request, args.cache, args.options,
                                   args.sink_file.empty() ? nullptr : &sink);
  sink_out.close();
  if (!path) {
    return report_error(path.error());
  }
  nlohmann::json out{{"ok", true}, {"path", path->string()}, {"sink_restarts", restarts}};
  std::cout << out.dump() << "\n";
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  Args args;
  if (auto why = parse(argc, argv, args); !why.empty()) {
    return usage(why);
  }
  if (args.command == "first") {
    return run_first(args);
  }
  if (args.command == "archive") {
    return run_archive(args);
  }
  return usage("unknown command '" + args.command + "' (first or archive)");
}
