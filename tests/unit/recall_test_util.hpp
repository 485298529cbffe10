// SPDX-License-Identifier: Apache-2.0
// Test helpers for signed recall lists: real Ed25519 (or other) keys and signatures made by
// the openssl CLI, exactly as DESIGN.md tells a site to make them.
#pragma once

#include "util/process.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace test_util {

namespace fs = std::filesystem;

inline void run_ok(const std::vector<std::string>& argv) {
  auto r = cudnnctl::util::run_process({argv, std::nullopt, std::chrono::seconds(30), 1u << 20});
  REQUIRE(r);
  INFO(argv[0] << " " << argv[1] << ": " << r->err);
  REQUIRE(r->ok());
}

inline void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// A signer: <dir>/<name>.key (private) and <name>.pub.pem, made by `openssl genpkey`.
struct Signer {
  fs::path dir;
  std::string name;
  Signer(fs::path d, std::string n, const char* algorithm = "ed25519")
      : dir(std::move(d)), name(std::move(n)) {
    fs::create_directories(dir);
    std::vector<std::string> gen = {"openssl", "genpkey", "-algorithm", algorithm, "-out", key()};
    if (std::string(algorithm) == "EC") {
      gen = {"openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-out",    key()};
    }
    run_ok(gen);
    run_ok({"openssl", "pkey", "-in", key(), "-pubout", "-out", pub()});
  }
  std::string key() const { return (dir / (name + ".key")).string(); }
  std::string pub() const { return (dir / (name + ".pub.pem")).string(); }
  // Puts the public key into <root>/etc/cudnnctl/keys.d/<name>.pem.
  void install(const fs::path& root) const {
    write(root / "etc/cudnnctl/keys.d" / (name + ".pem"), read(pub()));
  }
  // Writes <list>.sig: the raw signature of the list's exact bytes.
  void sign(const fs::path& list) const {
    run_ok({"openssl", "pkeyutl", "-sign", "-rawin", "-inkey", key(), "-in", list.string(), "-out",
            list.string() + ".sig"});
  }
};

} // namespace test_util
