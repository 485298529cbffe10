#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 17 round two on the GPU machine, through the cudnnctl commands themselves:
#   the apt cuDNN 9.14 and the pip cuDNN 9.19 repackaged (repack.py) as NVIDIA-layout archives
#   on a loopback mirror, installed into a temporary --root with --require-gpu (smoke on every
#   GPU), the second one with --perf-gate 5 (passes); `cudnnctl bench` of both (table, JSON,
#   CSV, SVG); the zeroed-kernel build (rolled back, exit 5); a deliberately slow build
#   (slow_shim.so in front of the real 9.19 shim) with --perf-gate 5 (rolled back, exit 5);
#   doctor and recommend with the real GPU.
#   gpu17b.sh DIR OUT      DIR holds cudnnctl (+ libarchive.so.13), cudnnctl-smoke,
#                          cudnnctl-bench, repack.py, slow_shim.so
set -u
D=$(cd "$1" && pwd)
OUTDIR=$2
mkdir -p "$OUTDIR"
W=$(mktemp -d /tmp/gpu17b.XXXXXX)
M=$W/mirror
R=$W/root
mkdir -p "$M" "$R/etc/ld.so.conf.d"
echo 'include /etc/ld.so.conf.d/*.conf' >"$R/etc/ld.so.conf"
T0=$EPOCHREALTIME
log() { echo "$*" | tee -a "$OUTDIR/log.txt"; }
since() { python3 -c 'import sys; print("%.1f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$1" "$EPOCHREALTIME"; }
# cudnnctl finds the one library Ubuntu 24.04 lacks (libarchive.so.13) in $D/lib; its children
# never see that directory (the smoke/bench environment keeps only LD_LIBRARY_PATH entries that
# hold libcuda.so.1 and no libcudnn*).
C() { LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$D/cudnnctl" "$@"; }

log "== machine"
{ uname -a; cat /etc/os-release | head -2; nvidia-smi -L; nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv; cat /proc/driver/nvidia/version; } >"$OUTDIR/machine.txt" 2>&1
cat "$OUTDIR/machine.txt" | tee -a "$OUTDIR/log.txt"
LD_LIBRARY_PATH=$D/lib ldd "$D/cudnnctl" | grep "not found" && log "ldd: missing libraries"
C --version | tee -a "$OUTDIR/log.txt"
for h in cudnnctl-smoke cudnnctl-bench; do
  readelf -d "$D/$h" | grep -qE 'RPATH|RUNPATH' && log "$h has an RPATH/RUNPATH (unexpected)"
done
"$D/cudnnctl-smoke" --gpus >"$OUTDIR/gpus.json" 2>"$OUTDIR/gpus.err"
log "cudnnctl-smoke --gpus: exit $?"

PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1)
repack() { # NAME BUILD LIBDIR INCDIR [args]
  local name=$1 build=$2 lib=$3 inc=$4 t=$EPOCHREALTIME
  shift 4
  local rc=0
  python3 "$D/repack.py" --lib-dir "$lib" --include-dir "$inc" --mirror "$M/$name" --build "$build" \
    --cuda 13 --print "$@" >"$OUTDIR/repack-$name.json" 2>"$OUTDIR/repack-$name.err" || rc=$?
  log "repacked $name (build $build$([ $# -eq 0 ] || echo ", $*")): exit $rc, $(since "$t") s"
}
repack apt 90 /usr/lib/x86_64-linux-gnu /usr/include/x86_64-linux-gnu
repack pip 90 "$PIP/lib" "$PIP/include"
repack zero 91 "$PIP/lib" "$PIP/include" --zero-fatbin engines
repack slow 94 "$PIP/lib" "$PIP/include" --slow-shim "$D/slow_shim.so"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$M" && exec python3 -m http.server --bind 127.0.0.1 "$PORT") >"$W/http.log" 2>&1 &
HTTP=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
URL=http://127.0.0.1:$PORT

# step NAME EXPECTED ARGS...: cudnnctl --root R ARGS (stdout NAME.out, stderr NAME.err).
step() {
  local name=$1 want=$2 rc=0 t=$EPOCHREALTIME
  shift 2
  C --root "$R" "$@" >"$OUTDIR/$name.out" 2>"$OUTDIR/$name.err" || rc=$?
  log "$(printf '%-26s exit %s (expected %s) %6s s   cudnnctl %s' "$name" "$rc" "$want" "$(since "$t")" "$*")"
}
log "== steps"
step 01-doctor-empty 0 doctor
step 02-install-apt914 0 --json --cuda 13 --mirror "$URL/apt/" install 9.14.0.90 --require-gpu
step 03-install-pip919-gate 0 --json --cuda 13 --mirror "$URL/pip/" install 9.19.0.90 --require-gpu --perf-gate 5
step 04-smoke 0 --json smoke
step 05-bench 0 --json bench --versions 9.14.0.90,9.19.0.90 --csv "$OUTDIR/bench.csv" --plot "$OUTDIR/bench.svg"
cp "$OUTDIR/05-bench.out" "$OUTDIR/bench.json"
step 06-bench-table 0 bench --from "$OUTDIR/bench.json" --baseline 9.14.0.90
step 07-install-zeroed 5 --json --cuda 13 --mirror "$URL/zero/" install 9.19.0.91 --require-gpu
step 08-install-slow-gate 5 --json --cuda 13 --mirror "$URL/slow/" install 9.19.0.94 --require-gpu --perf-gate 5
step 09-status 0 --json status
step 10-history 0 history
step 11-doctor 0 doctor
step 12-recommend 0 --cuda 13 recommend
step 13-bench-quick 0 --json bench --quick --versions 9.14.0.90,9.19.0.90
kill "$HTTP" 2>/dev/null
log "total $(since "$T0") s"
