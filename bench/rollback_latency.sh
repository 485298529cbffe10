#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/rollback_latency.sh [RUNS] NAME=BIN [NAME=BIN...]: wall and CPU time of
# `cudnnctl rollback --undo` (a switch between two stub builds of the test mirror) for each
# binary, RUNS rounds (default 40), the binaries interleaved in alternating order within each
# round; medians. Each binary gets its own root with 9.1.0 and 9.27.0 installed (CUDA 12).
# Compare a tree against its base in one run: docs/BENCHMARKS.md, "rollback on 2026-12-06".
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
runs=40
if [[ ${1:-} =~ ^[0-9]+$ ]]; then runs=$1; shift; fi
[ $# -ge 1 ] || { echo "usage: bench/rollback_latency.sh [RUNS] NAME=BIN [NAME=BIN...]" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$repo/tests/fixtures/mkmirror.sh" "$tmp/mirror" >/dev/null
sides=()
for spec in "$@"; do
  name=${spec%%=*} bin=${spec#*=}
  root=$tmp/root-$name
  mkdir -p "$root/etc/ld.so.conf.d"
  echo 'include /etc/ld.so.conf.d/*.conf' >"$root/etc/ld.so.conf"
  for v in 9.1.0 9.27.0; do
    "$bin" --root "$root" --mirror "file://$tmp/mirror" --cuda 12 -q install "$v" --no-smoke >/dev/null
  done
  sides+=("$name=$bin:$root")
done
python3 - "$runs" "${sides[@]}" <<'PY'
import os, statistics, subprocess, sys, time
runs = int(sys.argv[1])
sides = [a.split("=", 1) for a in sys.argv[2:]]
res = {n: ([], []) for n, _ in sides}
for i in range(runs):
    for name, spec in (sides if i % 2 == 0 else sides[::-1]):
        exe, root = spec.rsplit(":", 1)
        t0 = time.perf_counter()
        p = subprocess.Popen([exe, "--root", root, "rollback", "--undo"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)  # CPU of cudnnctl and the children it waited for
        wall = (time.perf_counter() - t0) * 1000
        if status:
            sys.exit(name + ": " + p.stderr.read().decode())
        res[name][0].append(wall)
        res[name][1].append((ru.ru_utime + ru.ru_stime) * 1000)
for name, (w, c) in res.items():
    w.sort()
    print("%-10s rollback wall median %.1f ms (p10 %.1f, p90 %.1f), CPU median %.1f ms, %d runs"
          % (name, statistics.median(w), w[len(w) // 10], w[len(w) * 9 // 10],
             statistics.median(c), runs))
PY
