#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Second device call of issue 17's proof: the perf gate failing on a deliberately slow build
# (slow_shim.so: a busy wait before each execute/convolution), after gpu17b.sh's first slow
# build (a usleep) went unnoticed by the bench. Diagnoses first (which object the bench
# child binds cudnnBackendExecute to, what one call costs), then installs pip 9.19.0.90 and
# the slow 9.19.0.95 with --perf-gate 5.   gpu17c.sh DIR OUT
set -u
D=$(cd "$1" && pwd)
OUTDIR=$2
mkdir -p "$OUTDIR"
W=$(mktemp -d /tmp/gpu17c.XXXXXX)
M=$W/mirror
R=$W/root
mkdir -p "$M" "$R/etc/ld.so.conf.d"
echo 'include /etc/ld.so.conf.d/*.conf' >"$R/etc/ld.so.conf"
T0=$EPOCHREALTIME
log() { echo "$*" | tee -a "$OUTDIR/log.txt"; }
since() { python3 -c 'import sys; print("%.1f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$1" "$EPOCHREALTIME"; }
C() { LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$D/cudnnctl" "$@"; }
PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1)
for spec in "pip 90" "slow 95 --slow-shim $D/slow_shim.so"; do
  set -- $spec
  name=$1 build=$2
  shift 2
  python3 "$D/repack.py" --lib-dir "$PIP/lib" --include-dir "$PIP/include" --mirror "$M/$name" \
    --build "$build" --cuda 13 --print "$@" >"$OUTDIR/repack-$name.json" 2>"$OUTDIR/repack-$name.err"
  log "repacked $name: exit $?"
done
X=$W/x
mkdir -p "$X"
tar -C "$X" -xJf "$M"/slow/cudnn/linux-x86_64/*.tar.xz
L=$(ls -d "$X"/*/lib)
ls -la "$L" | tee -a "$OUTDIR/log.txt"
readelf -d "$L/libcudnn.so.9" | grep -E 'NEEDED|SONAME|RUNPATH' | tee -a "$OUTDIR/log.txt"
env -i PATH=/usr/bin:/bin python3 - "$L/libcudnn.so.9" <<'PY' 2>&1 | tee -a "$OUTDIR/log.txt"
import ctypes, sys, time
l = ctypes.CDLL(sys.argv[1])
for i in range(4):
    t = time.perf_counter(); r = l.cudnnBackendExecute(None, None, None)
    print("direct cudnnBackendExecute(NULL...) ->", r, "%.3f ms" % ((time.perf_counter() - t) * 1e3))
PY
LD_DEBUG=bindings "$D/cudnnctl-bench" --cudnn "$L/libcudnn.so.9" --workload bert --quick >"$OUTDIR/diag-bench.jsonl" 2>"$W/lddebug.txt"
log "cudnnctl-bench on the slow lib: exit $?"
grep -E "cudnnBackendExecute|cudnnConvolutionForward|symbol .delay|usleep" "$W/lddebug.txt" | head -20 | tee -a "$OUTDIR/log.txt"
grep -E '"result"|"item"' "$OUTDIR/diag-bench.jsonl" | cut -c1-260 | tee -a "$OUTDIR/log.txt"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$M" && exec python3 -m http.server --bind 127.0.0.1 "$PORT") >"$W/http.log" 2>&1 &
HTTP=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
URL=http://127.0.0.1:$PORT
step() {
  local name=$1 want=$2 rc=0 t=$EPOCHREALTIME
  shift 2
  C --root "$R" "$@" >"$OUTDIR/$name.out" 2>"$OUTDIR/$name.err" || rc=$?
  log "$(printf '%-26s exit %s (expected %s) %6s s   cudnnctl %s' "$name" "$rc" "$want" "$(since "$t")" "$*")"
}
step 21-install-pip919 0 --json --cuda 13 --mirror "$URL/pip/" install 9.19.0.90 --require-gpu
step 22-install-slow-gate 5 --json --cuda 13 --mirror "$URL/slow/" install 9.19.0.95 --require-gpu --perf-gate 5
step 23-status 0 --json status
step 24-history 0 history
kill "$HTTP" 2>/dev/null
log "total $(since "$T0") s"
