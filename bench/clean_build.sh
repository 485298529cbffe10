#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/clean_build.sh [--together] [ROUNDS] REV [REV...]: wall and CPU time of a clean build
# of each git revision (scripts/build's configuration: RelWithDebInfo, every target, no ccache),
# ROUNDS rounds (default 2); medians, and ratios to the first REV. Each revision is checked out
# once into a temporary worktree and built into an empty directory each round.
# Default: one build at a time with -j$(nproc), the revisions in alternating order within each
# round (the wall time a developer waits). --together: all revisions at the same time, each
# with -j$(nproc / number of REVs), so that their CPU times meet the same machine (a shared
# VM's speed drifts by 15 % within an hour). bench/README.md, "Build time".
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rounds=2 together=0
if [ "${1:-}" = --together ]; then together=1; shift; fi
if [[ ${1:-} =~ ^[0-9]+$ ]]; then rounds=$1; shift; fi
[ $# -ge 1 ] || { echo "usage: bench/clean_build.sh [--together] [ROUNDS] REV [REV...]" >&2; exit 2; }
tmp=$(mktemp -d)
cleanup() {
  for d in "$tmp"/src-*; do [ -d "$d" ] && git -C "$repo" worktree remove --force "$d"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
revs=("$@")
for i in "${!revs[@]}"; do
  git -C "$repo" rev-parse --verify -q "${revs[$i]}^{commit}" >/dev/null ||
    { echo "clean_build.sh: ${revs[$i]} is not a commit of $repo" >&2; exit 2; }
  git -C "$repo" worktree add -q --detach "$tmp/src-$i" "${revs[$i]}"
done
# build_one ROUND INDEX JOBS: one clean build of revs[INDEX]; appends "round rev wall user sys load".
build_one() {
  local r=$1 i=$2 jobs=$3 load wall user sys
  rm -rf "$tmp/build-$i"
  load=$(cut -d' ' -f1 /proc/loadavg)
  (cd "$tmp/src-$i" &&
    CCACHE_DISABLE=1 /usr/bin/time -f "%e %U %S" -o "$tmp/time-$i" bash -c \
      'cmake -S . -B "$0" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
       cmake --build "$0" -j"$1" >"$0.log" 2>&1' "$tmp/build-$i" "$jobs") ||
    { tail -20 "$tmp/build-$i.log" >&2; echo "clean_build.sh: ${revs[$i]} did not build" >&2; return 1; }
  read -r wall user sys <"$tmp/time-$i"
  echo "$r ${revs[$i]} $wall $user $sys $load" >>"$tmp/results"
  echo "round $((r + 1)) ${revs[$i]}: wall $wall s, CPU $user + $sys s (load average $load at the start)"
}
cores=$(nproc)
for ((r = 0; r < rounds; r++)); do
  if ((together)); then
    jobs=$((cores / ${#revs[@]} > 0 ? cores / ${#revs[@]} : 1))
    pids=()
    for i in "${!revs[@]}"; do build_one "$r" "$i" "$jobs" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p" || exit 1; done
    continue
  fi
  order=("${!revs[@]}")
  if ((r % 2 == 1)); then
    order=(); for ((i = ${#revs[@]} - 1; i >= 0; i--)); do order+=("$i"); done
  fi
  for i in "${order[@]}"; do build_one "$r" "$i" "$cores" || exit 1; done
done
python3 - "$tmp/results" "${revs[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
first = None
for rev in sys.argv[2:]:
    mine = [r for r in rows if r[1] == rev]
    wall = statistics.median(float(r[2]) for r in mine)
    cpu = statistics.median(float(r[3]) + float(r[4]) for r in mine)
    first = first or (wall, cpu)
    print(f"{rev}: median wall {wall:.1f} s ({wall / first[0]:.3f}), CPU {cpu:.1f} s ({cpu / first[1]:.3f})")
PY
