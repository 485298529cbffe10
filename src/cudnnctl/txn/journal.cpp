// SPDX-License-Identifier: Apache-2.0
#include "txn/journal.hpp"

#include "store/slots.hpp"
#include "util/fs.hpp"
#include "util/state_file.hpp"
#include "util/strings.hpp"

#include <nlohmann/json.hpp>
#include <unistd.h>

namespace cudnnctl::txn {

using nlohmann::json;

namespace {
constexpr std::pair<Phase, const char*> k_phases[] = {
    {Phase::prepare, "prepare"},
    {Phase::entry_committed, "entry-committed"},
    {Phase::generation_created, "generation-created"},
    {Phase::switching, "switching"},
    {Phase::switched, "switched"},
    {Phase::integrated, "integrated"},
    {Phase::reverting, "reverting"},
    {Phase::deleting, "deleting"},
    {Phase::deactivating, "deactivating"},
    {Phase::slot_deactivating, "slot-deactivating"},
};

json opt_int(const std::optional<int>& v) {
  return v ? json(*v) : json(nullptr);
}
std::optional<int> get_opt_int(const json& j, const char* key) {
  if (j.contains(key) && j[key].is_number_integer()) {
    return j[key].get<int>();
  }
  return std::nullopt;
}
} // namespace

const char* phase_name(Phase p) {
  for (const auto& [phase, name] : k_phases) {
    if (phase == p) {
      return name;
    }
  }
  return "unknown";
}

std::optional<Phase> parse_phase(std::string_view s) {
  for (const auto& [phase, name] : k_phases) {
    if (s == name) {
      return phase;
    }
  }
  return std::nullopt;
}

std::string boot_id() {
  auto text = util::read_file("/proc/sys/kernel/random/boot_id", 128);
  return text ? std::string(util::trim(*text)) : std::string();
}

Journal new_journal(std::string command, std::string argv) {
  Journal j;
  j.txid = util::random_hex(8);
  j.command = std::move(command);
  j.argv = std::move(argv);
  j.pid = static_cast<int>(::getpid());
  j.boot_id = boot_id();
  j.started = util::utc_timestamp();
  return j;
}

Status write_journal(const Layout& layout, const Journal& jr) {
  // A slot switch is format 2: an earlier cudnnctl, which knows only `current`, must not
  // replay it against `current` (it discards the journal as unreadable instead).
  json j = {{"format", jr.slot.empty() ? jr.format : k_journal_format_slots},
            {"txid", jr.txid},
            {"command", jr.command},
            {"argv", jr.argv},
            {"pid", jr.pid},
            {"boot_id", jr.boot_id},
            {"started", jr.started},
            {"prefix", layout.sys_prefix().string()},
            {"phase", phase_name(jr.phase)},
            {"staging", jr.staging},
            {"entry", jr.entry},
            {"entry_created", jr.entry_created},
            {"from_generation", opt_int(jr.from_generation)},
            {"to_generation", opt_int(jr.to_generation)},
            {"generation_created", jr.generation_created},
            {"delete_generations", jr.delete_generations},
            {"delete_entries", jr.delete_entries}};
  if (!jr.slot.empty()) {
    j["slot"] = jr.slot;
  }
  TRY(util::make_dirs(layout.state_dir()));
  return util::write_file_atomic(layout.journal_file(), j.dump(2) + "\n", 0644);
}

Result<std::optional<Journal>> read_journal(const Layout& layout) {
  if (!util::exists_nofollow(layout.journal_file())) {
    return std::optional<Journal>();
  }
  // Never a hang on a FIFO planted at the path, never through a symlink (issue 14, B13).
  TRY_ASSIGN(std::string text, util::read_state_file(layout.journal_file()));
  json j = json::parse(text, nullptr, false);
  auto corrupt = [&](const std::string& why) {
    return fail(ErrorCode::environment,
                "journal " + layout.journal_file().string() + " is corrupt: " + why);
  };
  if (j.is_discarded() || !j.is_object()) {
    return corrupt("not a JSON object");
  }
  try {
    Journal jr;
    jr.format = j.at("format").get<int>();
    if (jr.format != k_journal_format && jr.format != k_journal_format_slots) {
      return corrupt("format " + std::to_string(jr.format) + " is not supported by this cudnnctl");
    }
    jr.txid = j.at("txid").get<std::string>();
    jr.command = j.at("command").get<std::string>();
    jr.argv = j.value("argv", "");
    jr.pid = j.value("pid", 0);
    jr.boot_id = j.value("boot_id", "");
    jr.started = j.value("started", "");
    jr.prefix = j.value("prefix", "");
    auto phase = parse_phase(j.at("phase").get<std::string>());
    if (!phase) {
      return corrupt("unknown phase");
    }
    jr.phase = *phase;
    jr.staging = j.value("staging", "");
    jr.entry = j.value("entry", "");
    jr.entry_created = j.value("entry_created", false);
    jr.from_generation = get_opt_int(j, "from_generation");
    jr.to_generation = get_opt_int(j, "to_generation");
    jr.generation_created = j.value("generation_created", false);
    jr.delete_generations = j.value("delete_generations", std::vector<int>{});
    jr.delete_entries = j.value("delete_entries", std::vector<std::string>{});
    jr.slot = jr.format == k_journal_format_slots ? j.at("slot").get<std::string>() : "";
    if (jr.format == k_journal_format_slots && !store::valid_slot_id(jr.slot)) {
      return corrupt("invalid slot name");
    }
    jr.format = k_journal_format;
    // Names come from a file on disk: never let them address anything outside the store.
    auto bad_name = [](const std::string& n) {
      return n.find('/') != std::string::npos || n == "." || n == "..";
    };
    if (bad_name(jr.staging) || bad_name(jr.entry)) {
      return corrupt("invalid entry or staging name");
    }
    for (const auto& e : jr.delete_entries) {
      if (e.empty() || bad_name(e)) {
        return corrupt("invalid entry name in delete list");
      }
    }
    return std::optional<Journal>(std::move(jr));
  } catch (const json::exception& e) {
    return corrupt(e.what());
  }
}

Status clear_journal(const Layout& layout) {
  TRY(util::remove_file(layout.journal_file()));
  return util::fsync_dir(layout.state_dir());
}

} // namespace cudnnctl::txn
