// SPDX-License-Identifier: Apache-2.0
// A repack's independent zstd frames: the writer, the scanner that finds frame boundaries,
// the parallel decoder, and extraction through it (against libzstd's own decoder).
#include "archive/backup_writer.hpp"
#include "archive/reader.hpp"
#include "archive/zstd_decoder.hpp"
#include "archive/zstd_frames.hpp"
#include "archive_test_util.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/thread_cpu.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <zstd.h>

using namespace cudnnctl;
using namespace archive_test;

namespace {

// `data` as independent frames of `frame_bytes` (FrameWriter, level 3).
std::string frames_of(const std::string& data, size_t frame_bytes, bool checksum = false) {
  std::string out;
  auto w = archive::FrameWriter::open(
      3,
      [&out](const void* d, size_t n) -> Status {
        out.append(static_cast<const char*>(d), n);
        return {};
      },
      frame_bytes, checksum);
  REQUIRE(w);
  // In uneven pieces, as libarchive writes.
  for (size_t pos = 0; pos < data.size(); pos += 10240 - 7) {
    REQUIRE(w->write(data.data() + pos, std::min<size_t>(10240 - 7, data.size() - pos)));
  }
  REQUIRE(w->finish());
  return out;
}

// One frame as the zstd CLI streams it: no content size in the header.
std::string unsized_frame(const std::string& data) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  REQUIRE(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0)) == 0);
  std::string out(ZSTD_compressBound(data.size()), '\0');
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  REQUIRE(ZSTD_compressStream2(c, &o, &in, ZSTD_e_end) == 0);
  ZSTD_freeCCtx(c);
  out.resize(o.pos);
  return out;
}

std::string libzstd_decode(const std::string& z, size_t size) {
  std::string out(size, '\0');
  const size_t n = ZSTD_decompress(out.data(), out.size(), z.data(), z.size());
  REQUIRE(ZSTD_isError(n) == 0);
  out.resize(n);
  return out;
}

// The frames of `z` as the scanner splits it, fed `piece` bytes at a time.
Result<std::vector<std::string>> split(const std::string& z, size_t piece) {
  archive::FrameScanner scanner;
  std::vector<std::string> frames;
  std::vector<unsigned char> frame;
  auto bytes = std::span(reinterpret_cast<const unsigned char*>(z.data()), z.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    auto chunk = bytes.subspan(pos, std::min(piece, bytes.size() - pos));
    TRY_ASSIGN(size_t used, scanner.feed(chunk, frame));
    pos += used;
    if (scanner.done()) {
      frames.emplace_back(frame.begin(), frame.end());
      frame.clear();
      scanner.next();
    }
  }
  if (!scanner.at_start()) {
    return fail(ErrorCode::integrity, "ends inside a frame");
  }
  return frames;
}

// Decodes all of `z` with a FrameDecoder pulling `piece` bytes at a time.
Result<std::string> decode_all(const std::string& z, size_t piece, size_t threads) {
  size_t pos = 0;
  auto pull = [&]() -> Result<std::span<const unsigned char>> {
    const size_t n = std::min(piece, z.size() - pos);
    auto s = std::span(reinterpret_cast<const unsigned char*>(z.data()) + pos, n);
    pos += n;
    return s;
  };
  archive::FrameDecoder d(pull, {}, threads);
  std::string out;
  while (true) {
    TRY_ASSIGN(std::span<const char> got, d.next());
    if (got.empty()) {
      return out;
    }
    out.append(got.data(), got.size());
  }
}

std::vector<TEntry> frames_tree() {
  const std::string top = "cudnn-linux-x86_64-9.9.9.9_cuda12-archive";
  return {mk_dir(top),
          mk_dir(top + "/lib"),
          mk_file(top + "/lib/libcudnn_a.so.9", random_bytes(3 << 20, 7), 0755),
          mk_file(top + "/lib/libcudnn_b.so.9", std::string(5 << 20, 'b') + random_bytes(4099)),
          mk_symlink(top + "/lib/libcudnn.so", "libcudnn_a.so.9"),
          mk_file(top + "/include/cudnn.h", "#define CUDNN_MAJOR 9\n")};
}

} // namespace

TEST_CASE("FrameWriter writes independent sized frames that libzstd and the scanner read",
          "[archive][zstd]") {
  const std::string data = random_bytes(300000, 3) + std::string(700001, 'x');
  const std::string z = frames_of(data, 128 << 10);
  CHECK(libzstd_decode(z, data.size()) == data); // one ordinary .zst to every zstd reader
  for (size_t piece : {size_t{1}, size_t{7}, size_t{4096}, z.size()}) {
    auto frames = split(z, piece);
    REQUIRE(frames);
    REQUIRE(frames->size() == 8); // ceil(1,000,001 / 131,072)
    std::string joined;
    uint64_t content = 0;
    for (const auto& f : *frames) {
      auto size = archive::frame_content_size(
          std::span(reinterpret_cast<const unsigned char*>(f.data()), f.size()));
      REQUIRE(size);
      REQUIRE(size->has_value());
      content += **size;
      joined += f;
    }
    CHECK(content == data.size());
    CHECK(joined == z);
  }
  // The empty stream has no frame at all.
  CHECK(frames_of("", 1 << 20).empty());
}

TEST_CASE("FrameScanner drops skippable frames and refuses what is not a frame",
          "[archive][zstd]") {
  const std::string a = frames_of(std::string(1000, 'a'), 1 << 20);
  const std::string b = frames_of(random_bytes(5000), 1 << 20);
  // A skippable frame (magic 0x184D2A5?, 4-byte size, payload) between the two.
  const std::string skip = std::string("\x53\x2a\x4d\x18\x03\x00\x00\x00xyz", 11);
  auto frames = split(a + skip + b, 3);
  REQUIRE(frames);
  CHECK(*frames == std::vector<std::string>{a, b});

  auto garbage = split(a + "garbage!", 5);
  REQUIRE_FALSE(garbage);
  CHECK(garbage.error().code == ErrorCode::integrity);
  CHECK(garbage.error().message == "corrupt archive: no zstd frame where one should start");

  std::string reserved_bit = a;
  reserved_bit[4] = static_cast<char>(reserved_bit[4] | 0x08);
  auto bit = split(reserved_bit, 64);
  REQUIRE_FALSE(bit);
  CHECK(bit.error().message.find("reserved bit") != std::string::npos);

  CHECK_FALSE(split(a.substr(0, a.size() - 1), 64)); // truncated

  // A frame larger than the cap is refused before it is all in memory.
  archive::FrameScanner small;
  small.max_frame_bytes = 100;
  std::vector<unsigned char> frame;
  auto big =
      small.feed(std::span(reinterpret_cast<const unsigned char*>(b.data()), b.size()), frame);
  REQUIRE_FALSE(big);
  CHECK(big.error().message.find("larger than 100 bytes") != std::string::npos);
  CHECK(frame.size() <= 100);
}

TEST_CASE("FrameDecoder returns the frames in order on any number of threads", "[archive][zstd]") {
  std::string data;
  for (uint32_t i = 0; i < 40; ++i) {
    data += random_bytes(20000 + i * 997, i) + std::string(30000, static_cast<char>('a' + i % 26));
  }
  const std::string z = frames_of(data, 64 << 10);
  for (size_t threads : {size_t{1}, size_t{2}, size_t{5}}) {
    for (size_t piece : {size_t{13}, size_t{65536}, z.size()}) {
      auto got = decode_all(z, piece, threads);
      REQUIRE(got);
      CHECK(got->size() == data.size());
      CHECK(*got == data);
    }
  }
  // An empty stream gives no content, and a frame of no content is passed over.
  auto none = decode_all("", 1, 2);
  REQUIRE(none);
  CHECK(none->empty());
  std::string empty_frame(64, '\0');
  empty_frame.resize(ZSTD_compress(empty_frame.data(), empty_frame.size(), "", 0, 3));
  REQUIRE(ZSTD_getFrameContentSize(empty_frame.data(), empty_frame.size()) == 0);
  auto around = decode_all(frames_of("ab", 1 << 20) + empty_frame + frames_of("cd", 1 << 20), 5, 2);
  REQUIRE(around);
  CHECK(*around == "abcd");
}

TEST_CASE("FrameDecoder refuses streams that are not a repack's frames", "[archive][zstd]") {
  const std::string data = random_bytes(200000, 9) + std::string(200000, 'q');
  const std::string z = frames_of(data, 100000);

  SECTION("a frame without a content size") {
    auto got = decode_all(z + unsized_frame("tail"), 4096, 2);
    REQUIRE_FALSE(got);
    CHECK(got.error().code == ErrorCode::integrity);
    CHECK(got.error().message ==
          "corrupt archive: zstd frame 4 (at byte " + std::to_string(z.size()) +
              ") does not record a content size of at most 8388608 bytes, as every frame of a "
              "repack does");
  }
  SECTION("a changed byte inside a compressed block (frames with checksums)") {
    // Without a checksum a changed byte may decode to other bytes: the stream's sha256 and
    // the files' catch that (the repack tests); here the frame's own check fails.
    std::string bad = frames_of(data, 100000, true);
    bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x5a);
    auto got = decode_all(bad, 4096, 3);
    REQUIRE_FALSE(got);
    CHECK(got.error().code == ErrorCode::integrity);
    CHECK(got.error().message.find("does not decode") != std::string::npos);
  }
  SECTION("a stream cut inside a frame") {
    auto got = decode_all(z.substr(0, z.size() - 3), 4096, 2);
    REQUIRE_FALSE(got);
    CHECK(got.error().message.find("ends inside frame 3 (truncated)") != std::string::npos);
  }
  SECTION("bytes after the last frame that are no frame") {
    auto got = decode_all(z + std::string(8, '\0'), 4096, 2);
    REQUIRE_FALSE(got);
    CHECK(got.error().message.find("no zstd frame where one should start") != std::string::npos);
  }
  SECTION("the pull's own error, unchanged") {
    size_t calls = 0;
    auto pull = [&]() -> Result<std::span<const unsigned char>> {
      if (++calls == 3) {
        return fail(ErrorCode::network, "the mirror went away");
      }
      return std::span(reinterpret_cast<const unsigned char*>(z.data()) + (calls - 1) * 1000, 1000);
    };
    archive::FrameDecoder d(pull, {}, 2);
    auto got = d.next();
    REQUIRE_FALSE(got);
    CHECK(got.error().code == ErrorCode::network);
    CHECK(got.error().message == "the mirror went away");
  }
}

TEST_CASE("extract reads a repack's frames in parallel, with the same result and checks",
          "[archive][zstd]") {
  const fs::path dir = fs::temp_directory_path() / ("cudnnctl-frames-" + util::random_hex());
  fs::create_directories(dir);
  write_tar(dir / "a.tar", frames_tree(), archive_test::Compression::none);
  const std::string tar = read_bytes(dir / "a.tar");
  write_bytes(dir / "framed.tar.zst", frames_of(tar, archive::k_repack_frame_bytes));
  write_tar(dir / "one.tar.zst", frames_tree(),
            archive_test::Compression::zstd); // libarchive's one stream

  archive::ExtractOptions o;
  o.format = archive::ArchiveFormat::tar_zstd;
  o.writing = archive::FileWriting::background;
  std::vector<archive::Entry> reference;
  for (const char* name : {"one.tar.zst", "framed.tar.zst"}) {
    for (size_t threads : {size_t{1}, size_t{4}}) {
      o.decoder_threads = threads;
      const fs::path out = dir / (std::string(name) + std::to_string(threads));
      fs::create_directories(out);
      MemorySource source(read_bytes(dir / name), 1, 300000);
      (void)util::take_thread_cpu();
      auto got = archive::extract(source, out, o);
      REQUIRE(got);
      // The frames went through the decoder threads; libarchive's one stream did not.
      bool decoders = false;
      for (const auto& [thread, cpu] : util::take_thread_cpu()) {
        decoders = decoders || thread == "zstd decoders";
      }
      CHECK(decoders == (std::string(name) == "framed.tar.zst"));
      CHECK(source.position() == fs::file_size(dir / name)); // read to its end
      if (reference.empty()) {
        reference = *got;
      }
      REQUIRE(got->size() == reference.size());
      for (size_t i = 0; i < got->size(); ++i) {
        CHECK((*got)[i].path == reference[i].path);
        CHECK((*got)[i].sha256 == reference[i].sha256);
      }
    }
  }
  std::vector<std::string> paths;
  for (const auto& e : reference) {
    paths.push_back(e.path);
  }
  CHECK(paths == std::vector<std::string>{"lib", "lib/libcudnn_a.so.9", "lib/libcudnn_b.so.9",
                                          "lib/libcudnn.so", "include", "include/cudnn.h"});

  // Read a byte at a time: the first frame's header is gathered from several reads, and the
  // frames still go to the decoders.
  fs::create_directories(dir / "bytewise");
  MemorySource bytewise(read_bytes(dir / "framed.tar.zst"), 1, 1);
  (void)util::take_thread_cpu();
  auto slow = archive::extract(bytewise, dir / "bytewise", o);
  REQUIRE(slow);
  CHECK(slow->size() == reference.size());
  bool decoded = false;
  for (const auto& [thread, cpu] : util::take_thread_cpu()) {
    decoded = decoded || thread == "zstd decoders";
  }
  CHECK(decoded);

  // Hostile entries are refused the same way through the frames.
  write_tar(dir / "evil.tar", {mk_dir("top"), mk_file("top/../../etc/passwd", "x")},
            archive_test::Compression::none);
  write_bytes(dir / "evil.tar.zst", frames_of(read_bytes(dir / "evil.tar"), 4096));
  fs::create_directories(dir / "evil");
  auto evil = archive::extract_file(dir / "evil.tar.zst", dir / "evil", o);
  REQUIRE_FALSE(evil);
  CHECK(evil.error().code == ErrorCode::integrity);
  CHECK(evil.error().message.find("..") != std::string::npos);

  // A plain tar is still not a .tar.zst, and frames of something that is not a tar are corrupt.
  fs::create_directories(dir / "plain");
  auto plain = archive::extract_file(dir / "a.tar", dir / "plain", o);
  REQUIRE_FALSE(plain);
  CHECK(plain.error().message == "not a .tar.zst archive");
  write_bytes(dir / "notar.zst", frames_of(random_bytes(50000), 4096));
  fs::create_directories(dir / "notar");
  auto notar = archive::extract_file(dir / "notar.zst", dir / "notar", o);
  REQUIRE_FALSE(notar);
  CHECK(notar.error().code == ErrorCode::integrity);
  CHECK(notar.error().message.starts_with("corrupt archive: "));
  (void)util::remove_tree(dir);
}

TEST_CASE("BackupWriter with independent frames writes a repack's frames of 1 MiB of tar",
          "[archive][zstd]") {
  const fs::path dir = fs::temp_directory_path() / ("cudnnctl-framew-" + util::random_hex());
  fs::create_directories(dir);
  write_bytes(dir / "big", random_bytes((3 << 20) + 5, 11));
  {
    auto fd = util::open_fd(dir / "out.tar.zst", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd);
    auto w = archive::BackupWriter::open(fd->get(), archive::Compression::zstd, 3,
                                         archive::ZstdFraming::independent_frames);
    REQUIRE(w);
    REQUIRE(w->add_directory("top", {0755, 0, 0, 0}));
    REQUIRE(w->add_file("top/big", dir / "big", {0644, 0, 0, 0}));
    REQUIRE(w->finish());
    CHECK(w->output_sha256() == *util::sha256_file(dir / "out.tar.zst"));
  }
  auto frames = split(read_bytes(dir / "out.tar.zst"), 65536);
  REQUIRE(frames);
  CHECK(frames->size() == 4); // 3 MiB of file data and the tar's headers and end
  for (size_t i = 0; i < frames->size(); ++i) {
    const auto& f = (*frames)[i];
    auto size = archive::frame_content_size(
        std::span(reinterpret_cast<const unsigned char*>(f.data()), f.size()));
    REQUIRE(size);
    REQUIRE(size->has_value());
    if (i + 1 < frames->size()) {
      CHECK(**size == archive::k_repack_frame_bytes);
    }
  }
  fs::create_directories(dir / "x");
  archive::ExtractOptions o;
  o.format = archive::ArchiveFormat::tar_zstd;
  auto got = archive::extract_file(dir / "out.tar.zst", dir / "x", o);
  REQUIRE(got);
  CHECK(read_bytes(dir / "x/big") == read_bytes(dir / "big"));
  (void)util::remove_tree(dir);
}

TEST_CASE("a zstd stream whose first frame is larger than 8 MiB is read by libarchive",
          "[archive][zstd]") {
  const fs::path dir = fs::temp_directory_path() / ("cudnnctl-bigframe-" + util::random_hex());
  fs::create_directories(dir);
  const std::string top = "cudnn-linux-x86_64-9.9.9.9_cuda12-archive";
  const std::string data = random_bytes((9 << 20) + 3, 5);
  write_tar(dir / "a.tar", {mk_dir(top), mk_file(top + "/big.so", data)},
            archive_test::Compression::none);
  const std::string tar = read_bytes(dir / "a.tar");
  // One frame as `zstd` writes a file it knows the size of: the size is in the header.
  std::string z(ZSTD_compressBound(tar.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), tar.data(), tar.size(), 3));
  REQUIRE(ZSTD_getFrameContentSize(z.data(), z.size()) == tar.size());
  REQUIRE(tar.size() > archive::k_max_parallel_frame_bytes);
  write_bytes(dir / "one.tar.zst", z);
  archive::ExtractOptions o;
  o.format = archive::ArchiveFormat::tar_zstd;
  o.writing = archive::FileWriting::background;
  fs::create_directories(dir / "x");
  (void)util::take_thread_cpu();
  auto got = archive::extract_file(dir / "one.tar.zst", dir / "x", o);
  REQUIRE(got);
  std::vector<std::string> threads;
  for (const auto& [thread, cpu] : util::take_thread_cpu()) {
    threads.push_back(thread);
  }
  // The background writer's threads were noted, the decoders' were not there.
  CHECK(std::find(threads.begin(), threads.end(), "file writer") != threads.end());
  CHECK(std::find(threads.begin(), threads.end(), "zstd decoders") == threads.end());
  CHECK(read_bytes(dir / "x/big.so") == data);
  (void)util::remove_tree(dir);
}
