// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace cudnnctl::cli {

// Parses argv, runs one command, prints human or JSON output, returns the exit code.
// The one catch site of the program.
int run(int argc, char** argv);

} // namespace cudnnctl::cli
