#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every C and C++ file tracked by git is formatted as .clang-format says (clang-format 14,
# Debian 12's; scripts/install-deps installs it). Prints the files that differ.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format is not installed (scripts/install-deps)"; exit 1; }
bad=()
while IFS= read -r f; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.cpp' '*.hpp' '*.c' '*.h')
if [ "${#bad[@]}" -gt 0 ]; then
  printf 'not formatted (run clang-format -i FILE):\n'
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "format: $(git ls-files '*.cpp' '*.hpp' '*.c' '*.h' | wc -l) files formatted"
