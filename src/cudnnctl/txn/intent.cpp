// SPDX-License-Identifier: Apache-2.0
// What a transaction is about to do (txn/transaction.hpp, Intent), one builder per kind.
#include "txn/transaction.hpp"

namespace cudnnctl::txn {

namespace {

// The fields every kind of intent has: its kind, the command, the entry it is about (if any).
Intent intent_of(Intent::Kind kind, std::string command, std::string entry = {}) {
  Intent i;
  i.kind = kind;
  i.command = std::move(command);
  i.entry = std::move(entry);
  return i;
}

} // namespace

Intent Intent::build(std::string command, std::string entry, std::string context) {
  Intent i = intent_of(Kind::build, std::move(command), std::move(entry));
  i.context = std::move(context);
  return i;
}

Intent Intent::activate(std::string command, std::string entry) {
  return intent_of(Kind::activate, std::move(command), std::move(entry));
}

Intent Intent::rollback(int generation, std::string entry) {
  Intent i = intent_of(Kind::rollback, "rollback", std::move(entry));
  i.target = generation;
  return i;
}

Intent Intent::in_slot(std::string id) && {
  Intent i = std::move(*this);
  i.slot = std::move(id);
  return i;
}

Intent Intent::deletion(std::string command, std::vector<int> generations,
                        std::vector<std::string> entries) {
  Intent i = intent_of(Kind::deletion, std::move(command));
  i.delete_generations = std::move(generations);
  i.delete_entries = std::move(entries);
  return i;
}

Intent Intent::deactivation(std::string command) {
  return intent_of(Kind::deactivation, std::move(command));
}

Intent Intent::slot_deactivation(std::string command, std::string slot, std::string entry) {
  Intent i = intent_of(Kind::slot_deactivation, std::move(command), std::move(entry));
  i.slot = std::move(slot);
  return i;
}

} // namespace cudnnctl::txn
