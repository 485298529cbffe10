#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# How long `cudnnctl check` takes without --smoke (issue 18: under 50 ms), measured, not a
# timed test:  bench/check_latency.sh [RUNS]   (default 200)
# One install of a stub release (tests/fixtures/mkmirror.sh, from a file:// mirror) into a
# temporary root, then RUNS back-to-back `cudnnctl --root R check` and the same with
# --prometheus and --nfd files; prints the median, p90 and max wall time of each in ms
# (process start to exit, as a health checker sees it). $CUDNNCTL names the binary
# (default build/bin/cudnnctl). Writes only under a temporary directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-200}
cudnnctl=${CUDNNCTL:-$here/../build/bin/cudnnctl}
[ -x "$cudnnctl" ] || { echo "no cudnnctl at $cudnnctl (build first, or set CUDNNCTL)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudnnctl-bench-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bash "$here/../tests/fixtures/mkmirror.sh" "$tmp/mirror" >/dev/null
mkdir -p "$tmp/root/etc/ld.so.conf.d"
echo 'include /etc/ld.so.conf.d/*.conf' >"$tmp/root/etc/ld.so.conf"
"$cudnnctl" --root "$tmp/root" --mirror "file://$tmp/mirror" --cuda 12 -q install 9.27.0
files=$("$cudnnctl" --root "$tmp/root" --json check | python3 -c 'import json,sys; print(json.load(sys.stdin)["active"]["path"])')
echo "cudnnctl check on $(find "$files" | wc -l) paths of the active entry; $runs runs each; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
python3 - "$runs" "$cudnnctl" "$tmp" <<'PY'
import statistics, subprocess, sys, time
runs, exe, tmp = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cases = {
    "check": [exe, "--root", tmp + "/root", "check"],
    "check --prometheus F --nfd F": [exe, "--root", tmp + "/root", "check",
                                     "--prometheus", tmp + "/c.prom", "--nfd", tmp + "/cudnn"],
}
for name, cmd in cases.items():
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - t0) * 1000)
        if r.returncode != 0:
            sys.exit("%s exited %d" % (" ".join(cmd), r.returncode))
    times.sort()
    print("%-32s median %6.1f ms   p90 %6.1f ms   max %6.1f ms" % (
        name, statistics.median(times), times[int(len(times) * 0.9) - 1], times[-1]))
PY
