// SPDX-License-Identifier: Apache-2.0
// Signed recall lists: releases a site (or its vendor) says must not be installed.
//
// Format (DESIGN.md, "Recalls"): <root>/etc/cudnnctl/recalls.d/<name>.json =
//   {"schema": 1, "expires": "YYYY-MM-DD" (optional), "serial": N (optional, integer >= 0;
//    none counts as 0),
//    "recalls": [{"version": "9.10.0" | "9.10.0.56" | ">=9.5.0,<9.6", "cuda": "12" (optional),
//                 "reason": "...", "url": "..." (optional)}]}
// valid only with <name>.json.sig beside it: the raw 64-byte Ed25519 signature of the file's
// exact bytes (`openssl pkeyutl -sign -rawin`), by a PEM public key in
// <root>/etc/cudnnctl/keys.d/*.pem, verified through OpenSSL EVP.
//
// Policy (docs/COMPAT.md):
//   - unsigned, badly signed (or by an unknown key), uncheckable (no key) and malformed
//     lists are ignored with a warning; under `require_signed_recalls = true` loading fails
//     instead (ErrorCode::integrity for signature and expiry problems, ErrorCode::usage for a
//     signed but malformed list);
//   - an expired list (today, UTC, after "expires") still applies its recalls, which are
//     genuine statements of the signer, with a warning that newer ones may be missing; under
//     require_signed_recalls it is refused (ErrorCode::integrity), and so is a signed list
//     without "expires" (it could be replayed forever);
//   - replays (issue 34, F7): a list whose "serial" is lower than that of the newest verified
//     copy of the same name (the file name: recalls.d/site.json and a mirror's
//     cudnnctl-recalls/site.json are one list) kept in Policy::kept_dir, or than that of a
//     list of the same name read earlier in the same load, is not applied: the newer copy is
//     (its signature checked again with today's keys; one that no longer verifies is ignored
//     with a warning), with a warning naming both serials; under require_signed_recalls the
//     replay is refused (ErrorCode::integrity). An equal serial with other bytes: the recalls
//     of both apply (recalls only ever add), with a warning. A kept copy is only ever a
//     defence against an older list of its name: a name no longer presented is not applied.
//
// Wiring (for the commands that act on recalls): install/use call load_recalls() and refuse
// set.find_recall(full_version, cuda) with ErrorCode::requirement (exit 7; --force
// overrides); check/verify/doctor report an active recalled build (exit 8); mirror copies
// every list whose state is valid or expired together with its .sig (RecallSet::lists());
// the Ansible module reads them from --json. Loading only reads; keep_newest() writes the
// kept copies, and only commands that write state call it (ops::remember_recall_lists).
#pragma once

#include "core/result.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudnnctl::recall {

// --- Interface ---

inline constexpr const char* k_recalls_dir = "/etc/cudnnctl/recalls.d";
inline constexpr const char* k_keys_dir = "/etc/cudnnctl/keys.d";
// On a mirror: DIR/cudnnctl-recalls/{index,<name>.json,<name>.json.sig} (docs/COMPAT.md).
inline constexpr const char* k_mirror_recalls_dir = "cudnnctl-recalls";
inline constexpr const char* k_mirror_recalls_index = "index";
inline constexpr size_t k_max_list_size = 4u << 20; // the largest list read
// Under the state directory: the newest verified copy of each list, <name> and <name>.sig.
inline constexpr const char* k_kept_lists_dir = "recall-lists";

struct Recall {
  std::string version;     // "9.10.0": every build of the release; "9.10.0.56": that build;
                           // ">=9.5.0,<9.6" (manifest/specifier.hpp): every build in the range
  std::optional<int> cuda; // only builds for this CUDA major; nullopt: every variant
  std::string reason;
  std::string url;  // "" when the list gives none
  std::string list; // the list it came from, a path inside the root
};

enum class ListState {
  valid,         // signature verified, well-formed, not expired: applied
  expired,       // signature verified, past "expires": applied, with a warning
  unsigned_list, // no <name>.json.sig: ignored
  bad_signature, // the signature does not verify with any key (or is not 64 bytes): ignored
  no_keys,       // no usable key in keys.d to check it with: ignored
  malformed,     // signed, but not the format above: ignored
};
const char* state_name(ListState s);

struct ListStatus {
  std::string path; // inside the root: /etc/cudnnctl/recalls.d/site.json
  ListState state = ListState::valid;
  std::string message; // one line saying what is wrong and what to do; "" when valid
  std::optional<std::string> expires;
  size_t recalls = 0;  // entries applied from it
  uint64_t serial = 0; // its "serial" (0 when it has none); a replay: the newer copy's
  // valid and expired lists: the exact bytes that verified, and their signature (what
  // `mirror` carries, so that it never copies bytes other than the ones it checked).
  std::string text, signature;
};

// A list read from elsewhere than recalls.d (a mirror's cudnnctl-recalls/): `path` names it
// (the URL); `signature` is nullopt when the source has no <name>.sig.
struct ListText {
  std::string path;
  std::string text;
  std::optional<std::string> signature;
};

struct Policy {
  bool require_signed = false;    // config require_signed_recalls
  std::string today;              // "YYYY-MM-DD" (UTC) to compare "expires" with: today_utc()
  std::filesystem::path kept_dir; // the kept copies (<state>/recall-lists); "": none
};

// A verified list newer than the copy kept of its name: what keep_newest() writes.
struct NewerList {
  std::string name; // "site.json"
  uint64_t serial = 0;
  std::string text, signature;
};

class RecallSet {
public:
  // The recall covering cuDNN `version` built for CUDA `cuda`, or nullptr.
  //   version: pass the full 4-component version from the manifest ("9.10.0.56"). A recall
  //     of "9.10.0" covers every build of 9.10.0; a recall of "9.10.0.56" only that build. A
  //     3-component query (a label) also matches 4-component recalls of the release: some
  //     build of it is recalled, which is the safe answer when the build is not known.
  //   cuda: the build's CUDA major; nullopt (not known) matches CUDA-specific recalls too.
  [[nodiscard]] const Recall* find_recall(std::string_view version, std::optional<int> cuda) const;

  const std::vector<Recall>& recalls() const { return m_recalls; }
  // Every list found, with its state (for doctor, mirror and --json).
  const std::vector<ListStatus>& lists() const { return m_lists; }
  // One line per ignored or expired list and per unusable key file.
  const std::vector<std::string>& warnings() const { return m_warnings; }
  // The verified lists newer than the copies kept in Policy::kept_dir (one per name).
  const std::vector<NewerList>& newer() const { return m_newer; }

private:
  friend Result<RecallSet> load_recalls(const std::filesystem::path& root, const Policy& policy,
                                        const std::vector<ListText>& extra);
  std::vector<Recall> m_recalls;
  std::vector<ListStatus> m_lists;
  std::vector<std::string> m_warnings;
  std::vector<NewerList> m_newer;
};

// Reads keys.d and recalls.d under `root`, then the `extra` lists (checked with the same
// keys, the same rules), and applies `policy`. A missing directory is no list. Errors only
// under policy.require_signed (see above) or when a directory exists but cannot be read
// (ErrorCode::environment).
[[nodiscard]] Result<RecallSet> load_recalls(const std::filesystem::path& root,
                                             const Policy& policy,
                                             const std::vector<ListText>& extra = {});

// Writes set.newer() into `kept_dir` (<name>.sig, then <name>, each atomically and durably),
// creating it. A crash between the two leaves a pair that does not verify: ignored with a
// warning by the next load, and written again by the next command that keeps lists.
[[nodiscard]] Status keep_newest(const std::filesystem::path& kept_dir, const RecallSet& set);

// Whether `name` may name a list in a mirror's index: "<name>.json" of letters, digits,
// '.', '_' and '-', not starting with '.', at most 128 characters.
bool valid_list_name(std::string_view name);

// Parses one list's text (already verified). `path` names it in errors and in Recall::list.
// Malformed: ErrorCode::usage "<path>: <what>". `expires` and `serial` (0 when absent) are
// set when given.
[[nodiscard]] Result<std::vector<Recall>>
parse_recall_list(std::string_view text, const std::string& path,
                  std::optional<std::string>* expires = nullptr, uint64_t* serial = nullptr);

// "cuDNN 9.10.0.56 (CUDA 12) is recalled: <reason> (<url>) [recall list <path>]": one line
// naming the recall's reason, link and list, for refusals and findings.
std::string describe(const Recall& r, const std::string& version, int cuda_major);

// Today's date in UTC, "YYYY-MM-DD".
std::string today_utc();

} // namespace cudnnctl::recall
