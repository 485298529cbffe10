// SPDX-License-Identifier: Apache-2.0
// Reading keys.d and recalls.d under a root and deciding, list by list, what applies.
#include "recall/recall.hpp"
#include "recall/signature.hpp"
#include "util/fs.hpp"

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace cudnnctl::recall {

namespace fs = std::filesystem;

namespace {

constexpr size_t k_max_key = 64u << 10;

bool candidate_name(const std::string& name, std::string_view suffix) {
  return name.ends_with(suffix) && !name.starts_with(".") && !util::is_tmp_name(name);
}

// Names in `dir`; a directory that exists but cannot be listed is an error (a list that
// silently disappears would un-recall its releases).
Result<std::vector<std::string>> names_in(const fs::path& dir, const std::string& shown) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return std::vector<std::string>{};
    }
    return fail_errno("cannot read " + shown, errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    return fail(ErrorCode::usage, shown + " is not a directory");
  }
  if (::access(dir.c_str(), R_OK | X_OK) != 0) {
    return fail_errno("cannot read " + shown, errno);
  }
  return util::dir_names(dir);
}

std::vector<PublicKey> load_keys(const fs::path& root, std::vector<std::string>& warnings,
                                 const std::vector<std::string>& names) {
  std::vector<PublicKey> keys;
  for (const auto& name : names) {
    if (!candidate_name(name, ".pem")) {
      continue;
    }
    std::string shown = std::string(k_keys_dir) + "/" + name;
    auto text = util::read_file(util::under_root(root, shown), k_max_key);
    if (!text) {
      warnings.push_back("recall key " + shown + " skipped: " + text.error().message);
      continue;
    }
    auto key = PublicKey::from_pem(*text, shown);
    if (!key) {
      warnings.push_back("recall key skipped: " + key.error().message);
      continue;
    }
    keys.push_back(std::move(*key));
  }
  return keys;
}

// What one list comes to (its text and signature already read): a ListStatus for the set,
// or, under policy.require_signed, the refusal.
struct ListJudge {
  const std::vector<PublicKey>& keys;
  const Policy& policy;
  std::vector<std::string>& warnings;

  // text: nullopt with read_error when it could not be read; sig: nullopt when absent.
  Result<std::optional<ListStatus>> judge(const std::string& path,
                                          const std::optional<std::string>& text,
                                          const std::string& read_error,
                                          const std::optional<std::string>& sig,
                                          std::vector<Recall>& recalls) const {
    const std::string strict_hint = " (require_signed_recalls is set in /etc/cudnnctl/config.toml)";
    const std::string name = fs::path(path).filename().string();
    ListStatus st;
    st.path = path;
    // A list is ignored (lenient) or refused (strict) with one line saying why.
    auto reject = [&](ListState state, const std::string& why,
                      ErrorCode strict_code) -> Result<std::optional<ListStatus>> {
      st.state = state;
      st.message = st.path + ": " + why;
      if (policy.require_signed) {
        return fail(strict_code, "recall list " + st.message + strict_hint);
      }
      warnings.push_back("recall list " + st.message + "; ignored");
      return std::optional<ListStatus>(st);
    };
    if (!text) {
      return reject(ListState::malformed, "cannot be read: " + read_error, ErrorCode::usage);
    }
    if (!sig) {
      return reject(ListState::unsigned_list,
                    "not signed (no " + name +
                        ".sig beside it: sign the exact bytes with openssl pkeyutl -sign -rawin)",
                    ErrorCode::integrity);
    }
    if (sig->size() != k_ed25519_signature_size) {
      return reject(ListState::bad_signature,
                    name + ".sig is not a raw 64-byte Ed25519 signature (write it with openssl "
                           "pkeyutl -sign -rawin, not base64 or PEM)",
                    ErrorCode::integrity);
    }
    if (keys.empty()) {
      return reject(ListState::no_keys,
                    "cannot be checked: no Ed25519 public key in " + std::string(k_keys_dir) +
                        " (install the signer's key there as a .pem file)",
                    ErrorCode::integrity);
    }
    bool verified = false;
    for (const auto& key : keys) {
      TRY_ASSIGN(bool ok, key.verify(*text, *sig));
      verified = verified || ok;
    }
    if (!verified) {
      return reject(ListState::bad_signature,
                    "the signature does not verify with any of the " + std::to_string(keys.size()) +
                        " key(s) in " + k_keys_dir +
                        " (signed by another key, or the file changed after signing)",
                    ErrorCode::integrity);
    }
    auto parsed = parse_recall_list(*text, st.path, &st.expires);
    if (!parsed) {
      std::string why = parsed.error().message.substr(st.path.size() + 2);
      return reject(ListState::malformed, "signed but malformed: " + why, ErrorCode::usage);
    }
    // Strict mode trusts a list only for a bounded time: one without "expires" could be
    // replayed forever (issue 34, F8).
    if (!st.expires && policy.require_signed) {
      return fail(ErrorCode::integrity,
                  "recall list " + st.path +
                      " has no \"expires\" date: a strict host trusts a signed list only until "
                      "it expires (add \"expires\": \"YYYY-MM-DD\" and sign it again)" +
                      strict_hint);
    }
    if (st.expires && !policy.today.empty() && policy.today > *st.expires) {
      if (policy.require_signed) {
        return fail(ErrorCode::integrity, "recall list " + st.path + " expired on " + *st.expires +
                                              ": install a current list" + strict_hint);
      }
      st.state = ListState::expired;
      st.message = st.path + ": expired on " + *st.expires +
                   ": its recalls still apply, but newer ones may be missing (install a "
                   "current list)";
      warnings.push_back("recall list " + st.message);
    }
    st.recalls = parsed->size();
    st.text = *text;
    st.signature = *sig;
    for (auto& r : *parsed) {
      recalls.push_back(std::move(r));
    }
    return std::optional<ListStatus>(std::move(st));
  }
};

} // namespace

bool valid_list_name(std::string_view name) {
  if (name.size() > 128 || name.size() <= 5 || !name.ends_with(".json") || name[0] == '.') {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

Result<RecallSet> load_recalls(const fs::path& root, const Policy& policy,
                               const std::vector<ListText>& extra) {
  RecallSet set;
  TRY_ASSIGN(auto key_names, names_in(util::under_root(root, k_keys_dir), k_keys_dir));
  TRY_ASSIGN(auto list_names, names_in(util::under_root(root, k_recalls_dir), k_recalls_dir));
  std::vector<PublicKey> keys = load_keys(root, set.m_warnings, key_names);
  ListJudge judge{keys, policy, set.m_warnings};
  auto add = [&](std::optional<ListStatus> st) {
    if (st) {
      set.m_lists.push_back(std::move(*st));
    }
  };

  for (const auto& name : list_names) {
    if (candidate_name(name, ".json.sig")) {
      std::string list = name.substr(0, name.size() - 4);
      if (std::find(list_names.begin(), list_names.end(), list) == list_names.end()) {
        set.m_warnings.push_back("recall signature " + std::string(k_recalls_dir) + "/" + name +
                                 " has no list beside it; ignored");
      }
      continue;
    }
    if (!candidate_name(name, ".json")) {
      continue;
    }
    const std::string path = std::string(k_recalls_dir) + "/" + name;
    auto text = util::read_file(util::under_root(root, path), k_max_list_size);
    std::optional<std::string> body, sig;
    std::string read_error;
    if (text) {
      body = std::move(*text);
    } else {
      read_error = text.error().message;
    }
    fs::path sig_path = util::under_root(root, path + ".sig");
    if (util::exists_nofollow(sig_path)) {
      auto s = util::read_file(sig_path, 4096);
      sig = s ? std::move(*s) : std::string(); // unreadable: not a 64-byte signature
    }
    TRY_ASSIGN(auto st, judge.judge(path, body, read_error, sig, set.m_recalls));
    add(std::move(st));
  }
  for (const auto& l : extra) {
    TRY_ASSIGN(auto st, judge.judge(l.path, l.text, "", l.signature, set.m_recalls));
    add(std::move(st));
  }
  return set;
}

} // namespace cudnnctl::recall
