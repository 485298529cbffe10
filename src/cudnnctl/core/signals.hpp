// SPDX-License-Identifier: Apache-2.0
// What an interrupted command says. Knows nothing about cuDNN beyond the journal's path.
#pragma once

#include <filesystem>
#include <string>

namespace cudnnctl::core {

// --- Interface ---

// Installs handlers for SIGINT, SIGTERM and SIGHUP. Each writes one line to stderr, then
// re-raises the signal with its default action (the exit status stays 128 + N for shells and
// service managers). The line depends on `journal` (the transaction journal) at that instant:
// present, a transaction is unfinished and the line says that the state is the old or the new
// generation and that the next mutating command (or `cudnnctl recover`) finishes or undoes it;
// absent, that no transaction was in progress. Only async-signal-safe calls run in the handler
// (access, write, sigaction, raise). Call again to change `journal`; an empty `journal` (the
// first call, before the options are parsed) always says that no transaction was in progress.
void install_interrupt_handlers(const std::filesystem::path& journal);

// Between these two the process waits for a lock `holder` holds: an interrupt then says that
// it was waiting and nothing changed (a journal present is the holder's, not this process's).
void begin_lock_wait(const std::string& holder);
void end_lock_wait();

} // namespace cudnnctl::core
