#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the framework gate (issue 36) costs a switch (target: under 100 ms for 10 site-packages
# directories), measured, not a timed test:  bench/framework_gate.sh [RUNS]   (default 50)
# Two roots with the same store (9.27.0 and 9.1.0 of tests/fixtures/mkmirror.sh, 9.1.0
# active): root A has 10 virtual environments (/opt/envN/.venv/...site-packages), each with a
# torch and an ONNX Runtime (stub libraries from tests/fixtures/doctor/mkroot.py) and 300 other
# dist-info directories; root B has none. Times RUNS back-to-back `cudnnctl --root R --dry-run
# use 9.27.0` (the gate runs, every framework passes) on A and on B, interleaved, and prints
# the median and p90 of each, their difference (the gate's cost) and their ratio. $CUDNNCTL
# names the binary (default build/bin/cudnnctl). Writes only under a temporary directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-50}
cudnnctl=${CUDNNCTL:-$here/../build/bin/cudnnctl}
[ -x "$cudnnctl" ] || { echo "no cudnnctl at $cudnnctl (build first, or set CUDNNCTL)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudnnctl-bench-gate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bash "$here/../tests/fixtures/mkmirror.sh" "$tmp/mirror" >/dev/null
mk() { DOCTOR_STUB_CACHE=$tmp/stubs python3 "$here/../tests/fixtures/doctor/mkroot.py" "$@"; }
for r in A B; do
  mkdir -p "$tmp/$r/etc/ld.so.conf.d"
  echo 'include /etc/ld.so.conf.d/*.conf' >"$tmp/$r/etc/ld.so.conf"
  "$cudnnctl" --root "$tmp/$r" --mirror "file://$tmp/mirror" --cuda 12 -q install 9.27.0 --no-smoke
  "$cudnnctl" --root "$tmp/$r" --mirror "file://$tmp/mirror" --cuda 12 -q install 9.1.0 --no-smoke
done
for n in $(seq 0 9); do
  site=/opt/env$n/.venv/lib/python3.12/site-packages
  mk torch "$tmp/A" "$site" 2.11.0 --pin nvidia-cudnn-cu12==9.19.0.56 --cuda 12.8
  mk onnxruntime "$tmp/A" "$site" 1.20.1
  for i in $(seq 1 300); do
    mkdir -p "$tmp/A$site/pkg$i-1.0.dist-info" "$tmp/A$site/pkg$i"
    printf 'Metadata-Version: 2.1\nName: pkg%s\nVersion: 1.0\n' "$i" >"$tmp/A$site/pkg$i-1.0.dist-info/METADATA"
  done
done
n=$("$cudnnctl" --root "$tmp/A" --json --dry-run use 9.27.0 --no-smoke |
  python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["frameworks"]))')
[ "$n" = 20 ] || { echo "expected 20 frameworks judged on root A, got $n" >&2; exit 1; }
echo "cudnnctl --dry-run use 9.27.0: root A with 10 site-packages (20 frameworks, 3000 other dist-info), root B with none; $runs runs each, interleaved; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
python3 - "$runs" "$cudnnctl" "$tmp" <<'PY'
import statistics, subprocess, sys, time
runs, exe, tmp = int(sys.argv[1]), sys.argv[2], sys.argv[3]
times = {"A": [], "B": []}
for _ in range(runs):
    for r in ("A", "B"):
        cmd = [exe, "--root", tmp + "/" + r, "--dry-run", "use", "9.27.0", "--no-smoke"]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[r].append((time.perf_counter() - t0) * 1000)
        if p.returncode != 0:
            sys.exit("%s exited %d" % (" ".join(cmd), p.returncode))
med = {}
for r, label in (("A", "10 site-packages (gate judges 20)"), ("B", "no frameworks")):
    t = sorted(times[r])
    med[r] = statistics.median(t)
    print("%-36s median %6.1f ms   p90 %6.1f ms" % (label, med[r], t[int(len(t) * 0.9) - 1]))
print("gate cost (median A - median B): %.1f ms; ratio A/B %.2f" % (med["A"] - med["B"], med["A"] / med["B"]))
PY
