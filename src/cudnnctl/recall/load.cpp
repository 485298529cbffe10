// SPDX-License-Identifier: Apache-2.0
// Reading keys.d and recalls.d under a root and deciding, list by list, what applies.
#include "recall/recall.hpp"
#include "recall/signature.hpp"
#include "util/fs.hpp"

#include <algorithm>
#include <cerrno>
#include <map>
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

// Whether `sig` is a signature of `text` by one of `keys`.
Result<bool> verifies(const std::vector<PublicKey>& keys, const std::string& text,
                      const std::string& sig) {
  if (sig.size() != k_ed25519_signature_size) {
    return false;
  }
  bool verified = false;
  for (const auto& key : keys) {
    TRY_ASSIGN(bool ok, key.verify(text, sig));
    verified = verified || ok;
  }
  return verified;
}

// The newest verified copy of one list name seen so far in a load: the kept one, then each
// one presented with a higher serial.
struct Newest {
  uint64_t serial = 0;
  std::string text, signature;
  std::vector<Recall> recalls; // its entries, until they are applied
  bool applied = false;        // its recalls are in the set
  bool kept = false;           // it is the copy in kept_dir (nothing to write)
};

// What one list comes to (its text and signature already read): a ListStatus for the set,
// or, under policy.require_signed, the refusal.
struct ListJudge {
  const std::vector<PublicKey>& keys;
  const Policy& policy;
  std::vector<std::string>& warnings;
  std::map<std::string, std::optional<Newest>> newest = {}; // by list name

  // The kept copy of `name` (policy.kept_dir), checked again with today's keys; nullopt when
  // there is none or it no longer verifies (then with a warning).
  Result<std::optional<Newest>> read_kept(const std::string& name) const {
    if (policy.kept_dir.empty()) {
      return std::optional<Newest>();
    }
    const fs::path file = policy.kept_dir / name;
    if (!util::exists_nofollow(file)) {
      return std::optional<Newest>();
    }
    auto text = util::read_file(file, k_max_list_size);
    auto sig = util::read_file(file.string() + ".sig", 4096);
    Newest n;
    n.kept = true;
    bool ok = text && sig;
    if (ok) {
      TRY_ASSIGN(ok, verifies(keys, *text, *sig));
    }
    if (ok) {
      auto parsed = parse_recall_list(*text, file.string(), nullptr, &n.serial);
      ok = parsed.has_value();
      if (ok) {
        n.recalls = std::move(*parsed);
      }
    }
    if (!ok) {
      warnings.push_back("kept recall list " + file.string() +
                         " no longer verifies with the keys in " + k_keys_dir +
                         " (or cannot be read); ignored, and replaced by the next list of its name "
                         "that a command keeps");
      return std::optional<Newest>();
    }
    n.text = std::move(*text);
    n.signature = std::move(*sig);
    return std::optional<Newest>(std::move(n));
  }

  Result<std::optional<Newest>*> newest_of(const std::string& name) {
    auto it = newest.find(name);
    if (it == newest.end()) {
      TRY_ASSIGN(auto kept, read_kept(name));
      it = newest.emplace(name, std::move(kept)).first;
    }
    return &it->second;
  }

  // Applies `before` (the newer copy of st's name) when it is not yet: its entries, named
  // after st.path and its serial.
  static size_t apply(Newest& before, const ListStatus& st, std::vector<Recall>& recalls) {
    if (before.applied) {
      return 0;
    }
    before.applied = true;
    for (auto& r : before.recalls) {
      r.list = st.path + " (serial " + std::to_string(before.serial) + ", kept)";
      recalls.push_back(r);
    }
    return before.recalls.size();
  }

  // A verified, parsed list `st` against the newest copy of its name: whether its own
  // recalls apply (false: a replay, the newer copy applies instead), or the strict refusal.
  Result<bool> against_newest(ListStatus& st, std::vector<Recall>& parsed,
                              std::vector<Recall>& recalls, const std::string& strict_hint) {
    const std::string name = fs::path(st.path).filename().string();
    TRY_ASSIGN(std::optional<Newest> * slot, newest_of(name));
    const std::string serials =
        "recall list " + st.path + " has serial " + std::to_string(st.serial);
    if (*slot && st.serial < (*slot)->serial) {
      Newest& before = **slot;
      const std::string older = serials + ", older than serial " + std::to_string(before.serial) +
                                " seen before: an older list replayed (a stale mirror?)";
      if (policy.require_signed) {
        return fail(ErrorCode::integrity, older + "; install the current list (serial " +
                                              std::to_string(before.serial) + " or higher)" +
                                              strict_hint);
      }
      warnings.push_back(older + "; the kept serial " + std::to_string(before.serial) + " applies");
      st.message = st.path + ": replayed, serial " + std::to_string(st.serial) + " < " +
                   std::to_string(before.serial);
      st.recalls = apply(before, st, recalls);
      st.serial = before.serial;
      st.text = before.text;
      st.signature = before.signature;
      return false;
    }
    if (*slot && st.serial == (*slot)->serial && st.text != (*slot)->text) {
      warnings.push_back(serials + " like the copy seen before, but other bytes (signed twice "
                                   "with one serial?): the recalls of both apply; raise the "
                                   "serial each time the list is signed");
      apply(**slot, st, recalls);
      return true;
    }
    if (!*slot || st.serial > (*slot)->serial) {
      *slot = Newest{st.serial, st.text, st.signature, parsed, true, false};
    }
    return true;
  }

  // text: nullopt with read_error when it could not be read; sig: nullopt when absent.
  Result<std::optional<ListStatus>> judge(const std::string& path,
                                          const std::optional<std::string>& text,
                                          const std::string& read_error,
                                          const std::optional<std::string>& sig,
                                          std::vector<Recall>& recalls) {
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
    TRY_ASSIGN(bool verified, verifies(keys, *text, *sig));
    if (!verified) {
      return reject(ListState::bad_signature,
                    "the signature does not verify with any of the " + std::to_string(keys.size()) +
                        " key(s) in " + k_keys_dir +
                        " (signed by another key, or the file changed after signing)",
                    ErrorCode::integrity);
    }
    auto parsed = parse_recall_list(*text, st.path, &st.expires, &st.serial);
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
    st.text = *text;
    st.signature = *sig;
    TRY_ASSIGN(bool own, against_newest(st, *parsed, recalls, strict_hint));
    if (own) {
      st.recalls = parsed->size();
      for (auto& r : *parsed) {
        recalls.push_back(std::move(r));
      }
    }
    return std::optional<ListStatus>(std::move(st));
  }

  // The newest copies that are not the kept ones.
  std::vector<NewerList> newer() const {
    std::vector<NewerList> out;
    for (const auto& [name, n] : newest) {
      if (n && !n->kept) {
        out.push_back({name, n->serial, n->text, n->signature});
      }
    }
    return out;
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
  set.m_newer = judge.newer();
  return set;
}

Status keep_newest(const fs::path& kept_dir, const RecallSet& set) {
  if (set.newer().empty()) {
    return {};
  }
  TRY(util::make_dirs(kept_dir));
  for (const auto& n : set.newer()) {
    TRY(util::write_file_atomic(kept_dir / (n.name + ".sig"), n.signature));
    TRY(util::write_file_atomic(kept_dir / n.name, n.text));
  }
  return {};
}

} // namespace cudnnctl::recall
