// SPDX-License-Identifier: Apache-2.0
// Size, then SHA-256: the cheap check first, so a truncated file is reported as such.
#pragma once

#include "core/result.hpp"
#include "util/sha256_worker.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::verify {

// --- Interface ---

// Checks `path` against the manifest's size and sha256. Mismatch: ErrorCode::integrity with
// both values ("size mismatch for X: manifest says N bytes, file has M").
[[nodiscard]] Status verify_file(const std::filesystem::path& path, uint64_t expected_size,
                                 std::string_view expected_sha256);

// Compares already-computed values the same way (for streaming hashes).
[[nodiscard]] Status compare_digest(std::string_view what, uint64_t expected_size,
                                    std::string_view expected_sha256, uint64_t got_size,
                                    std::string_view got_sha256);

// The same for bytes hashed in pieces of `chunk_bytes` (a repack's sidecar lists the digest
// of every piece: release/sidecar.hpp): the sizes, then the first piece that differs
// (ErrorCode::integrity "sha256 mismatch for X: bytes A to B: expected ..., got ...").
[[nodiscard]] Status compare_chunks(std::string_view what, uint64_t expected_size,
                                    const std::vector<std::string>& expected, uint64_t got_size,
                                    const std::vector<std::string>& got, uint64_t chunk_bytes);

// The first place where two lists of chunk digests differ (one list ending first counts), or
// none when they are equal. Digests are compared as given.
[[nodiscard]] std::optional<size_t> first_difference(const std::vector<std::string>& a,
                                                     const std::vector<std::string>& b);

// `hash` (every byte of a stream fed to it) against the expected size and sha256, or, when the
// hash is chunked, against `expected_chunks` of util::k_sha256_chunk bytes: compare_digest or
// compare_chunks. Waits for the hash threads; the next update() starts afresh.
[[nodiscard]] Status compare_stream(std::string_view what, uint64_t expected_size,
                                    std::string_view expected_sha256,
                                    const std::vector<std::string>& expected_chunks,
                                    uint64_t got_size, util::Sha256Worker& hash);

} // namespace cudnnctl::verify
