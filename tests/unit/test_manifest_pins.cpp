// SPDX-License-Identifier: Apache-2.0
#include "manifest/manifest.hpp"
#include "manifest/pins.hpp"
#include "manifest/version.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

#include <catch2/catch.hpp>

using namespace cudnnctl;
using namespace cudnnctl::manifest;
namespace fs = std::filesystem;

namespace {

const fs::path k_redist = CUDNNCTL_REFERENCE_DIR "/nvidia-redist";

std::string reference_bytes(const std::string& label) {
  auto text = util::read_file(k_redist / ("redistrib_" + label + ".json"));
  REQUIRE(text);
  return *text;
}

const std::string k_sha_a(64, 'a');
const std::string k_sha_b(64, 'b');

} // namespace

TEST_CASE("built-in pins are manifests/pins.sha256", "[pins]") {
  auto file = util::read_file(fs::path(CUDNNCTL_SOURCE_DIR) / "manifests" / "pins.sha256");
  REQUIRE(file);
  CHECK(builtin_pins_text() == *file);
}

TEST_CASE("built-in pins match the real manifest bytes", "[pins]") {
  auto pins = load_pins("no-such-pins.d");
  REQUIRE(pins);
  std::vector<std::string> labels = pins->labels();
  REQUIRE(labels.size() == 20);
  CHECK(labels.front() == "8.9.4.25");
  CHECK(labels.back() == "9.22.0");
  for (const auto& label : labels) {
    INFO(label);
    REQUIRE(Version::parse(label));
    std::string bytes = reference_bytes(label);
    CHECK(pins->check(label, util::sha256_hex(bytes)) == PinVerdict::match);
    const Pin* pin = pins->find(label);
    REQUIRE(pin);
    CHECK(pin->source == "built-in");

    // The pinned bytes parse.
    CHECK(parse_manifest(bytes, "redistrib_" + label + ".json"));
    // Hex digits compare case-insensitively.
    std::string upper = util::sha256_hex(bytes);
    for (char& c : upper) {
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    CHECK(pins->check(label, upper) == PinVerdict::match);
    // An added trailing newline is a mismatch: hash the exact bytes.
    CHECK(pins->check(label, util::sha256_hex(bytes + "\n")) == PinVerdict::mismatch);
    // One modified byte is a mismatch.
    bytes[bytes.size() / 2] ^= 1;
    CHECK(pins->check(label, util::sha256_hex(bytes)) == PinVerdict::mismatch);
  }
}

TEST_CASE("unpinned labels", "[pins]") {
  auto pins = load_pins("no-such-pins.d");
  REQUIRE(pins);
  for (const char* label : {"9.1.0", "9.0.0", "8.9.7", "8.9.5", "9.27.0"}) {
    INFO(label);
    CHECK(pins->check(label, util::sha256_hex(reference_bytes(label))) == PinVerdict::unpinned);
    CHECK(pins->find(label) == nullptr);
  }
  // Labels are compared as written: 9.2.0.82 is a version, not the label 9.2.0.
  CHECK(pins->check("9.2.0.82", k_sha_a) == PinVerdict::unpinned);
}

TEST_CASE("PinSet::add parses sha256sum lines", "[pins]") {
  PinSet pins;
  SECTION("comments, blank lines, binary marker, CRLF") {
    REQUIRE(pins.add("# site pins\n\n" + k_sha_a + "  redistrib_9.1.0.json\r\n" + k_sha_b +
                         " *redistrib_8.9.7.json\n   \n",
                     "site.sha256"));
    CHECK(pins.labels() == std::vector<std::string>{"8.9.7", "9.1.0"});
    CHECK(pins.find("9.1.0")->source == "site.sha256:3");
    CHECK(pins.find("8.9.7")->source == "site.sha256:4");
    CHECK(pins.check("9.1.0", k_sha_a) == PinVerdict::match);
  }
  SECTION("upper-case hex is stored lower-case") {
    REQUIRE(pins.add(std::string(64, 'A') + "  redistrib_9.1.0.json", "x"));
    CHECK(pins.find("9.1.0")->sha256 == k_sha_a);
  }
  SECTION("labels sort by version") {
    REQUIRE(pins.add(k_sha_a + "  redistrib_9.10.0.json\n" + k_sha_a + "  redistrib_9.9.0.json\n" +
                         k_sha_a + "  redistrib_8.9.7.29.json\n" + k_sha_a +
                         "  redistrib_8.9.7.json\n",
                     "x"));
    CHECK(pins.labels() == std::vector<std::string>{"8.9.7", "8.9.7.29", "9.9.0", "9.10.0"});
  }
  SECTION("the same pin twice is fine and keeps the first source") {
    REQUIRE(pins.add(k_sha_a + "  redistrib_9.1.0.json", "one"));
    REQUIRE(pins.add(k_sha_a + "  redistrib_9.1.0.json", "two"));
    CHECK(pins.find("9.1.0")->source == "one:1");
  }
  SECTION("a contradicting pin is a usage error naming both sources") {
    REQUIRE(pins.add(k_sha_a + "  redistrib_9.1.0.json", "one"));
    auto added =
        pins.add(k_sha_b + "  redistrib_9.2.0.json\n" + k_sha_b + "  redistrib_9.1.0.json", "two");
    REQUIRE_FALSE(added);
    CHECK(added.error().code == ErrorCode::usage);
    CHECK(added.error().message.find("two:2") != std::string::npos);
    CHECK(added.error().message.find("one:1") != std::string::npos);
    // All or nothing: the good first line was not added either.
    CHECK(pins.find("9.2.0") == nullptr);
    CHECK(pins.check("9.1.0", k_sha_a) == PinVerdict::match);
  }
}

TEST_CASE("malformed pin lines are usage errors naming file:line", "[pins]") {
  const std::string table[] = {
      "abc  redistrib_9.1.0.json",
      std::string(63, 'a') + "  redistrib_9.1.0.json",
      std::string(64, 'g') + "  redistrib_9.1.0.json",
      k_sha_a,
      k_sha_a + "  ",
      k_sha_a + "  redistrib_9.1.0",
      k_sha_a + "  9.1.0.json",
      k_sha_a + "  redistrib_.json",
      k_sha_a + "  redistrib_9.1.json",
      k_sha_a + "  redistrib_9.x.0.json",
      k_sha_a + "  redistrib_09.1.0.json",
      k_sha_a + "  ../redistrib_9.1.0.json",
      k_sha_a + "redistrib_9.1.0.json",
      k_sha_a + "  redistrib_9.1.0.json extra",
  };
  for (const auto& line : table) {
    INFO(line);
    PinSet pins;
    auto added = pins.add("# header\n" + line + "\n", "/etc/cudnnctl/pins.d/site.sha256");
    REQUIRE_FALSE(added);
    CHECK(added.error().code == ErrorCode::usage);
    CHECK(added.error().message.starts_with("/etc/cudnnctl/pins.d/site.sha256:2: "));
    CHECK(added.error().message.find('\n') == std::string::npos);
    CHECK(pins.empty());
  }
}

TEST_CASE("load_pins reads pins.d", "[pins]") {
  fs::create_directories("pins1/pins.d");
  SECTION("an empty or missing directory gives the built-ins") {
    auto pins = load_pins("pins1/pins.d");
    REQUIRE(pins);
    CHECK(pins->labels().size() == 20);
    auto missing = load_pins("pins1/missing/pins.d");
    REQUIRE(missing);
    CHECK(missing->labels().size() == 20);
  }
  SECTION("a file adding a new label") {
    std::string sha = util::sha256_hex(reference_bytes("9.1.0"));
    REQUIRE(util::write_file_atomic("pins1/pins.d/site.sha256",
                                    "# mirrored\n" + sha + "  redistrib_9.1.0.json\n"));
    // Only *.sha256 files count; temporaries and hidden files are skipped.
    REQUIRE(util::write_file_atomic("pins1/pins.d/README", "not a pin file"));
    REQUIRE(util::write_file_atomic("pins1/pins.d/.hidden.sha256", "garbage"));
    REQUIRE(util::write_file_atomic("pins1/pins.d/x.tmp.abc.sha256", "garbage"));
    auto pins = load_pins("pins1/pins.d");
    REQUIRE(pins);
    CHECK(pins->labels().size() == 21);
    CHECK(pins->check("9.1.0", sha) == PinVerdict::match);
    CHECK(pins->find("9.1.0")->source == "pins1/pins.d/site.sha256:2");
    CHECK(pins->check("9.2.0", util::sha256_hex(reference_bytes("9.2.0"))) == PinVerdict::match);
  }
  SECTION("files are read in sorted order") {
    REQUIRE(util::write_file_atomic("pins1/pins.d/b.sha256", k_sha_b + "  redistrib_9.1.0.json\n"));
    REQUIRE(util::write_file_atomic("pins1/pins.d/a.sha256", k_sha_a + "  redistrib_9.1.0.json\n"));
    auto pins = load_pins("pins1/pins.d");
    REQUIRE_FALSE(pins);
    CHECK(pins.error().code == ErrorCode::usage);
    CHECK(pins.error().message.starts_with("pins1/pins.d/b.sha256:1: "));
    CHECK(pins.error().message.find("pins1/pins.d/a.sha256:1") != std::string::npos);
  }
  SECTION("a site pin contradicting a built-in pin") {
    REQUIRE(
        util::write_file_atomic("pins1/pins.d/site.sha256", k_sha_a + "  redistrib_9.2.0.json\n"));
    auto pins = load_pins("pins1/pins.d");
    REQUIRE_FALSE(pins);
    CHECK(pins.error().code == ErrorCode::usage);
    CHECK(pins.error().message.find("contradicts built-in") != std::string::npos);
  }
  SECTION("a malformed line names file:line") {
    REQUIRE(util::write_file_atomic("pins1/pins.d/site.sha256", "\n\nnot a pin\n"));
    auto pins = load_pins("pins1/pins.d");
    REQUIRE_FALSE(pins);
    CHECK(pins.error().code == ErrorCode::usage);
    CHECK(pins.error().message.starts_with("pins1/pins.d/site.sha256:3: "));
  }
  SECTION("an unreadable pins file is an environment error") {
    // A directory (or a dangling link) named *.sha256 cannot be read, even as root.
    fs::create_directories("pins1/pins.d/dir.sha256");
    auto pins = load_pins("pins1/pins.d");
    REQUIRE_FALSE(pins);
    CHECK(pins.error().code == ErrorCode::environment);
    fs::remove("pins1/pins.d/dir.sha256");
    fs::create_symlink("nowhere", "pins1/pins.d/dangling.sha256");
    auto dangling = load_pins("pins1/pins.d");
    REQUIRE_FALSE(dangling);
    CHECK(dangling.error().code == ErrorCode::environment);
  }
  SECTION("pins.d that is a file is an environment error") {
    REQUIRE(util::write_file_atomic("pins1/file", "x"));
    auto pins = load_pins("pins1/file");
    REQUIRE_FALSE(pins);
    CHECK(pins.error().code == ErrorCode::environment);
  }
  fs::remove_all("pins1");
}
