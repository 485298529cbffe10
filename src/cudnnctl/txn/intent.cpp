// SPDX-License-Identifier: Apache-2.0
// What a transaction is about to do (txn/transaction.hpp, Intent), one builder per kind.
#include "txn/transaction.hpp"

namespace cudnnctl::txn {

Intent Intent::build(std::string command, std::string entry, std::string context) {
  Intent i;
  i.kind = Kind::build;
  i.command = std::move(command);
  i.entry = std::move(entry);
  i.context = std::move(context);
  return i;
}

Intent Intent::activate(std::string command, std::string entry) {
  Intent i;
  i.kind = Kind::activate;
  i.command = std::move(command);
  i.entry = std::move(entry);
  return i;
}

Intent Intent::rollback(int generation, std::string entry) {
  Intent i;
  i.kind = Kind::rollback;
  i.command = "rollback";
  i.entry = std::move(entry);
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
  Intent i;
  i.kind = Kind::deletion;
  i.command = std::move(command);
  i.delete_generations = std::move(generations);
  i.delete_entries = std::move(entries);
  return i;
}

Intent Intent::deactivation(std::string command) {
  Intent i;
  i.kind = Kind::deactivation;
  i.command = std::move(command);
  return i;
}

Intent Intent::slot_deactivation(std::string command, std::string slot, std::string entry) {
  Intent i;
  i.entry = std::move(entry);
  i.kind = Kind::slot_deactivation;
  i.command = std::move(command);
  i.slot = std::move(slot);
  return i;
}

} // namespace cudnnctl::txn
