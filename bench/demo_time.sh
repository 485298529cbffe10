#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Times scripts/demo as a new user meets it: a fresh clone of this commit (no build directory),
# no ccache hits (CCACHE_DISABLE=1), the Debian packages already installed. Prints the wall and
# CPU time, the number of compiler warnings the build printed and the demo's output size;
# docs/BENCHMARKS.md ("First demo") holds the last measurement.
#   bench/demo_time.sh [--keep]     (--keep: leave the clone in $TMPDIR to look at)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
keep=0
[ "${1:-}" = --keep ] && keep=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudnnctl-demo-time.XXXXXX")
chmod 755 "$tmp"
[ "$keep" = 1 ] || trap 'rm -rf "$tmp"' EXIT
git clone -q --no-local "$here" "$tmp/clone"
cd "$tmp/clone"
load=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s.%N)
CCACHE_DISABLE=1 KEEP=0 TMPDIR=$tmp /usr/bin/time -f '%e %U %S' -o "$tmp/time" scripts/demo >"$tmp/demo.out" 2>&1 || {
  cat "$tmp/demo.out" >&2
  echo "demo_time: scripts/demo failed" >&2
  exit 1
}
end=$(date +%s.%N)
read -r wall user sys <"$tmp/time"
warnings=$(grep -c 'warning:' build-demo/demo-build.log || true)
printf 'commit %s, %s cores, load average at the start %s\n' "$(git rev-parse --short HEAD)" "$(nproc)" "$load"
printf 'scripts/demo from a fresh clone, CCACHE_DISABLE=1: %.0f s wall, %.0f + %.0f CPU-seconds\n' \
  "$wall" "$user" "$sys"
printf 'compiler warnings in the build: %s; the demo printed %s lines\n' "$warnings" "$(wc -l <"$tmp/demo.out")"
awk -v s="$start" -v e="$end" 'BEGIN { if (e - s >= 300) { print "over the 5-minute target"; exit 1 } }'
