// SPDX-License-Identifier: Apache-2.0
// history.jsonl: one JSON object per line, appended with O_APPEND and fsynced, never
// rewritten. What was done, when, from which generation to which, and how it ended.
#pragma once

#include "core/result.hpp"
#include "store/layout.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudnnctl::store {

// --- Interface ---

// A generation a record names: its number and, where they still existed when the record was
// written, its store entry and that entry's build.
struct HistoryRef {
  int generation = 0;
  std::string entry;       // "" when the generation was gone
  std::string version;     // "" when its entry was gone
  std::optional<int> cuda; // with version
  std::string platform;    // with version
};

// One line of history.jsonl. A string field is written only when it is not empty, except
// `command` and `result`, and in a transaction's record (names_switch) txid, argv and started.
struct HistoryRecord {
  std::string time; // set by append_history when empty
  std::string txid;
  std::string command;
  std::string argv; // the user's command line
  std::string result;
  std::string started;
  std::string message;
  // A transaction's record names both ends of its switch ("from" and "to", null for none);
  // a record of recovery's own (a discarded journal) names neither.
  bool names_switch = false;
  std::optional<HistoryRef> from;
  std::optional<HistoryRef> to;
  std::vector<int> deleted_generations;
  std::vector<std::string> deleted_entries;
  std::string entry;           // the transaction's entry, also when "to" is gone
  std::string slot;            // the slot it switched (store/slots.hpp)
  std::optional<bool> primary; // with slot: whether that was the primary slot
  // The transaction's notes (Transaction::note: archive_form, ...), in order.
  std::vector<std::pair<std::string, std::string>> notes;
  // Read back: the line as history.jsonl holds it (`history --json` prints it unchanged,
  // fields of other versions included).
  std::string line;
};

// Appends `record` as one line, fsynced.
[[nodiscard]] Status append_history(const Layout& layout, HistoryRecord record);

// All records in order, each read leniently (a field of the wrong type reads as absent). A
// torn last line (crash mid-append) is skipped; other malformed lines are skipped with a
// warning.
[[nodiscard]] Result<std::vector<HistoryRecord>> read_history(const Layout& layout,
                                                              std::vector<std::string>& warnings);

// The generations a record names ("from", "to"), for the next free generation number.
[[nodiscard]] std::vector<int> named_generations(const HistoryRecord& record);

} // namespace cudnnctl::store
