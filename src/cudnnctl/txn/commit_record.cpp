// SPDX-License-Identifier: Apache-2.0
// A transaction's commit record: its notes and the history.jsonl line that ends it
// (store::HistoryRecord).
#include "store/generations.hpp"
#include "store/history.hpp"
#include "store/slots.hpp"
#include "store/view.hpp"
#include "txn/transaction.hpp"
#include "util/hooks.hpp"

#include <unistd.h>

namespace cudnnctl::txn {

namespace {

// Generation n as a history record names it (none when n is unset; only the number when the
// generation or its entry is gone).
std::optional<store::HistoryRef> gen_ref(const store::StoreView& view, std::optional<int> n) {
  if (!n) {
    return std::nullopt;
  }
  store::HistoryRef ref;
  ref.generation = *n;
  if (const auto* g = view.generation(*n)) {
    ref.entry = g->entry;
    if (const auto* e = view.entry(g->entry)) {
      ref.version = e->version;
      ref.cuda = e->cuda_major;
      ref.platform = e->platform;
    }
  }
  return ref;
}

} // namespace

void Transaction::note(const std::string& key, const std::string& value) {
  for (auto& [k, v] : m_notes) {
    if (k == key) {
      v = value;
      return;
    }
  }
  m_notes.emplace_back(key, value);
}

Status Transaction::record(const std::string& result, const std::string& message) {
  const auto& layout = m_site.layout;
  TRY(util::hook("before-commit"));
  std::vector<std::string> warnings;
  store::StoreView view;
  if (auto gens = store::list_generations(layout, warnings)) {
    view.generations = *gens;
  }
  if (auto entries = store::list_entries(layout, warnings)) {
    view.entries = *entries;
  }
  store::HistoryRecord rec;
  rec.txid = m_jr.txid;
  rec.command = m_jr.command;
  rec.argv = m_jr.argv;
  rec.result = result;
  rec.names_switch = true;
  rec.from = gen_ref(view, m_jr.from_generation);
  rec.to = gen_ref(view, m_jr.to_generation);
  rec.started = m_jr.started;
  rec.message = message;
  rec.deleted_generations = m_jr.delete_generations;
  rec.deleted_entries = m_jr.delete_entries;
  rec.entry = m_jr.entry; // also when "to" is gone (an undone install)
  // The slot the transaction switched (store/slots.hpp); "primary" when it moved `current`.
  rec.slot = m_jr.slot;
  if (rec.slot.empty()) {
    if (const auto* e = view.entry(m_jr.entry)) {
      rec.slot = store::slot_id(*e);
    }
  }
  if (!rec.slot.empty()) {
    rec.primary = m_jr.slot.empty();
  }
  rec.notes = m_notes;
  // The history record is the commit record: once it is on disk the transaction is done,
  // and recovery only removes a journal whose txid it finds there (no second record).
  TRY(store::append_history(layout, std::move(rec)));
  if (!m_back_link.empty()) { // committed: the prepared way back is not needed any more
    (void)::unlink(m_back_link.c_str());
    m_back_link.clear();
  }
  Status cleared = util::hook("after-history");
  if (cleared) {
    cleared = clear_journal(layout);
  }
  if (!cleared) {
    m_site.notes.warn("the transaction is complete, but its journal could not be removed (" +
                      cleared.error().message + "); the next cudnnctl command removes it");
  }
  return {};
}

} // namespace cudnnctl::txn
