#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The GPU proof of issue 3, on a machine with an NVIDIA GPU (docs/GPU.md records a run).
#
#   scripts/gpu/smoke_real.sh [--cudnnctl PATH] [--source auto|pip|apt|cuda|LIBDIR:INCDIR]
#                             [--cuda N] [--out DIR] [--libs DIR] [--keep]
#
# 1. Repackages the real cuDNN found on this machine as NVIDIA-layout .tar.xz archives with a
#    redistrib manifest (scripts/gpu/repack.py): a good build (M.m.p.90), a broken build whose
#    engine libraries' .nv_fatbin sections (the GPU kernels) are zeroed while ELF headers,
#    SONAMEs and versions stay intact (M.m.p.91), and a build with a truncated library
#    (M.m.p.92).
# 2. Serves them on loopback (python3 -m http.server) and, into a temporary --root:
#      install the good build --require-gpu         -> exit 0, smoke test passed on every GPU
#      cudnnctl smoke; cudnnctl verify --smoke       -> exit 0
#      install the broken build --require-gpu        -> exit 5: only the GPU test can see it;
#                                                      rolled back to generation 1
#      install the truncated build                   -> exit 4, refused before the switch
#    and prints the timings. Without a GPU it runs every step that needs none, shows the GPU
#    steps as skipped, and exits 3.
# Sources searched (--source auto, in this order): PyTorch's pip wheel
# (/opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/{lib,include}), apt
# (/usr/lib/x86_64-linux-gnu/libcudnn*.so.9*, /usr/include/x86_64-linux-gnu/cudnn*_v9.h),
# the CUDA toolkit (/usr/local/cuda/{lib,lib64,include}).
# --libs DIR: put DIR on LD_LIBRARY_PATH of cudnnctl only (scripts/gpu/bundle.sh makes one for
# a binary built on another distribution); the smoke helper always gets a clean environment.
# Writes DIR/summary.txt, DIR/log.txt and every command's JSON into --out (default: a new
# directory under /tmp). Exit: 0 everything as expected on a GPU, 3 no GPU (the rest as
# expected), 1 otherwise, 2 usage.
set -euo pipefail
export LC_ALL=C # $EPOCHREALTIME with a decimal point

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CUDNNCTL=${CUDNNCTL:-$REPO/build/bin/cudnnctl}
SOURCE=auto
CUDA=""
OUTDIR=""
LIBS=""
KEEP=0
while [ $# -gt 0 ]; do
  case $1 in
  --cudnnctl) CUDNNCTL=$2; shift 2 ;;
  --source) SOURCE=$2; shift 2 ;;
  --cuda) CUDA=$2; shift 2 ;;
  --out) OUTDIR=$2; shift 2 ;;
  --libs) LIBS=$2; shift 2 ;;
  --keep) KEEP=1; shift ;;
  -h | --help) sed -n '3,32p' "${BASH_SOURCE[0]}"; exit 0 ;;
  *) echo "smoke_real.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

CUDNNCTL=$(cd "$(dirname "$CUDNNCTL")" && pwd)/$(basename "$CUDNNCTL")
HELPER=$(dirname "$CUDNNCTL")/cudnnctl-smoke
[ -n "$LIBS" ] || { [ -d "$(dirname "$CUDNNCTL")/lib" ] && LIBS=$(dirname "$CUDNNCTL")/lib; } || true
[ -n "$OUTDIR" ] || OUTDIR=$(mktemp -d /tmp/cudnnctl-gpu-out.XXXXXX)
mkdir -p "$OUTDIR"
WORK=$(mktemp -d /tmp/cudnnctl-gpu.XXXXXX)
HTTP_PID=""
cleanup() {
  [ -z "$HTTP_PID" ] || kill "$HTTP_PID" 2>/dev/null || true
  if [ "$KEEP" -eq 1 ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# since T: seconds since the $EPOCHREALTIME value T, one decimal (no bc needed).
since() {
  local us=$((${EPOCHREALTIME/./} - ${1/./}))
  printf '%d.%d' $((us / 1000000)) $((us / 100000 % 10))
}
T0=$EPOCHREALTIME
log() { printf '[%7ss] %s\n' "$(since "$T0")" "$*" | tee -a "$OUTDIR/log.txt"; }
die() { log "ERROR: $*"; exit 1; }
# jget FILE EXPR: python expression over d = the JSON in FILE.
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(v if isinstance(v,str) else json.dumps(v))' "$1" "$2"; }

# ---- 0. the machine ---------------------------------------------------------------------------
[ -x "$CUDNNCTL" ] || die "no cudnnctl at $CUDNNCTL (build it, or pass --cudnnctl)"
[ -x "$HELPER" ] || die "no cudnnctl-smoke beside $CUDNNCTL"
log "cudnnctl: $CUDNNCTL"
log "machine: $(uname -srm); $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
if [ -r /proc/driver/nvidia/version ]; then log "driver: $(head -1 /proc/driver/nvidia/version)"; else log "driver: none (/proc/driver/nvidia/version absent)"; fi
command -v nvidia-smi >/dev/null && nvidia-smi -L 2>&1 | sed 's/^/  /' | tee -a "$OUTDIR/log.txt" || true
missing=$(LD_LIBRARY_PATH=$LIBS ldd "$CUDNNCTL" | grep 'not found' || true)
[ -z "$missing" ] || die "cudnnctl cannot run here (missing libraries; see scripts/gpu/bundle.sh):
$missing"
rpath=$(readelf -d "$HELPER" | grep -E 'RPATH|RUNPATH' || true)
[ -z "$rpath" ] || die "cudnnctl-smoke has an RPATH/RUNPATH ($rpath): it must be built without"
log "cudnnctl-smoke: no RPATH/RUNPATH (checked with readelf -d)"
# cudnnctl keeps our LD_LIBRARY_PATH (the driver may be reachable only through it) with the
# bundled libraries in front when there are any; the helper gets what cudnnctl would give it.
cctl() {
  if [ -n "$LIBS" ]; then LD_LIBRARY_PATH=$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$CUDNNCTL" "$@"; else "$CUDNNCTL" "$@"; fi
}
DRIVER_LLP=""
IFS=: read -r -a _llp <<<"${LD_LIBRARY_PATH:-}"
for d in "${_llp[@]}"; do
  [ -n "$d" ] && [ -e "$d/libcuda.so.1" ] && ! ls "$d"/libcudnn* >/dev/null 2>&1 &&
    DRIVER_LLP=${DRIVER_LLP:+$DRIVER_LLP:}$d
done
log "driver directories passed to the helper: ${DRIVER_LLP:-(none: libcuda.so.1 comes from the ld.so cache)}"

gpu_rc=0
env -i PATH=/usr/bin:/bin ${CUDA_VISIBLE_DEVICES+CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES} \
  ${DRIVER_LLP:+LD_LIBRARY_PATH=$DRIVER_LLP} "$HELPER" --gpus >"$OUTDIR/gpus.jsonl" 2>"$OUTDIR/gpus.err" || gpu_rc=$?
sed 's/^/  /' "$OUTDIR/gpus.jsonl" | tee -a "$OUTDIR/log.txt"
HAVE_GPU=0
case $gpu_rc in
0) HAVE_GPU=1; log "usable GPU(s) found" ;;
3) log "NO GPU: the GPU steps will be skipped (exit 3 at the end)" ;;
4) log "GPUs exist but none is usable (compute mode, MIG, memory): GPU steps skipped" ;;
*) die "cudnnctl-smoke --gpus exited $gpu_rc: $(cat "$OUTDIR/gpus.err")" ;;
esac

# ---- 1. the real cuDNN on this machine -----------------------------------------------------------
find_source() {
  local d
  case $1 in
  pip)
    for d in /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn; do
      [ -e "$d/lib/libcudnn.so.9" ] && [ -d "$d/include" ] && { echo "$d/lib:$d/include"; return 0; }
    done ;;
  apt)
    [ -e /usr/lib/x86_64-linux-gnu/libcudnn.so.9 ] && [ -e /usr/include/x86_64-linux-gnu/cudnn_version_v9.h ] &&
      { echo "/usr/lib/x86_64-linux-gnu:/usr/include/x86_64-linux-gnu"; return 0; } ;;
  cuda)
    for d in /usr/local/cuda/lib /usr/local/cuda/lib64; do
      [ -e "$d/libcudnn.so.9" ] && [ -e /usr/local/cuda/include/cudnn_version.h ] &&
        { echo "$d:/usr/local/cuda/include"; return 0; }
    done ;;
  *:*) echo "$1"; return 0 ;;
  esac
  return 1
}
if [ "$SOURCE" = auto ]; then
  SRC=$(find_source pip || find_source apt || find_source cuda) || die "no cuDNN 9 found on this machine (pass --source LIBDIR:INCDIR)"
else
  SRC=$(find_source "$SOURCE") || die "no cuDNN found for --source $SOURCE"
fi
LIBDIR=${SRC%%:*}
INCDIR=${SRC#*:}
log "source: libraries $LIBDIR, headers $INCDIR"
if [ -z "$CUDA" ]; then
  # cuDNN links the CUDA runtime statically; cudnnGetCudartVersion() says which (13010 -> 13).
  cudart=$(env -i PATH=/usr/bin:/bin python3 -c 'import ctypes,sys; print(ctypes.CDLL(sys.argv[1]).cudnnGetCudartVersion())' "$LIBDIR/libcudnn.so.9" 2>/dev/null || true)
  [ -n "$cudart" ] || die "cannot ask $LIBDIR/libcudnn.so.9 for its CUDA version; pass --cuda N"
  CUDA=$((cudart / 1000))
  log "cudnnGetCudartVersion() = $cudart: a CUDA $CUDA build"
fi

repack() { # NAME BUILD [repack args]
  local name=$1 build=$2 t
  shift 2
  t=$EPOCHREALTIME
  python3 "$HERE/repack.py" --lib-dir "$LIBDIR" --include-dir "$INCDIR" --mirror "$WORK/mirror/$name" \
    --build "$build" --cuda "$CUDA" --print "$@" >"$OUTDIR/repack-$name.json"
  log "repacked $name: $(jget "$OUTDIR/repack-$name.json" 'd["version"]'), $(jget "$OUTDIR/repack-$name.json" 'd["size"]') bytes, $(since "$t") s$([ $# -eq 0 ] || echo "; $*")"
}
repack good 90
repack broken 91 --zero-fatbin engines
log "  zeroed: $(jget "$OUTDIR/repack-broken.json" 'd["zeroed"]')"
repack trunc 92 --truncate libcudnn_cnn
log "  truncated: $(jget "$OUTDIR/repack-trunc.json" 'd["truncated"]')"
LABEL=$(jget "$OUTDIR/repack-good.json" 'd["label"]')

# ---- 2. serve and install --------------------------------------------------------------------------
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$WORK/mirror" && exec python3 -m http.server --bind 127.0.0.1 "$PORT") >"$WORK/http.log" 2>&1 &
HTTP_PID=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
URL=http://127.0.0.1:$PORT
log "serving $WORK/mirror at $URL"
R=$WORK/root
mkdir -p "$R/etc/ld.so.conf.d"
echo 'include /etc/ld.so.conf.d/*.conf' >"$R/etc/ld.so.conf"

declare -a SUMMARY=()
FAILED=0
# step NAME EXPECTED ARGS...: cudnnctl --root R --json ARGS, kept as NAME.json; checks the exit.
step() {
  local name=$1 want=$2 rc=0 t dt line
  shift 2
  t=$EPOCHREALTIME
  cctl --root "$R" --cuda "$CUDA" --json "$@" >"$OUTDIR/$name.json" 2>"$OUTDIR/$name.err" || rc=$?
  dt=$(since "$t")
  line=$(printf '%-24s exit %s (expected %s) %6s s' "$name" "$rc" "$want" "$dt")
  if [ "$rc" != "$want" ]; then
    line="$line  <-- UNEXPECTED"
    FAILED=1
  fi
  log "$line"
  python3 - "$OUTDIR/$name.json" <<'EOF' | tee -a "$OUTDIR/log.txt"
import json, sys
d = json.load(open(sys.argv[1]))
for c in d.get("data", {}).get("checks", []):
    print("    %-13s %-8s %s" % (c["name"], c["status"], c["message"][:150]))
for g in d.get("data", {}).get("smoke", {}).get("gpus", []):
    print("    GPU %s %s (sm %s) cudnn %s: %s, max error %s, %.1f ms" % (
        g["gpu"], g["name"], g["compute_capability"], g["cudnn_version"], g["status"],
        g["max_error"], g["ms"]))
if "error" in d:
    print("    error: %s" % d["error"]["message"][:400])
EOF
  SUMMARY+=("$line")
  LAST_RC=$rc
}

GOOD=$(jget "$OUTDIR/repack-good.json" 'd["version"]')
BROKEN=$(jget "$OUTDIR/repack-broken.json" 'd["version"]')
TRUNC=$(jget "$OUTDIR/repack-trunc.json" 'd["version"]')
if [ "$HAVE_GPU" -eq 1 ]; then
  step 1-install-good 0 --mirror "$URL/good/" install "$GOOD" --require-gpu
  [ "$(jget "$OUTDIR/1-install-good.json" 'd["data"]["smoke"]["status"]')" = passed ] || { log "smoke did not pass"; FAILED=1; }
  step 2-smoke 0 smoke
  step 3-verify-smoke 0 verify --smoke
  step 4-install-broken 5 --mirror "$URL/broken/" install "$BROKEN" --require-gpu
  if [ "$LAST_RC" = 0 ]; then
    log "the smoke test passed with the engine libraries' kernels zeroed; zeroing every library's"
    step 4-rollback 0 rollback
    repack broken-all 93 --zero-fatbin all
    step 4b-install-broken-all 5 --mirror "$URL/broken-all/" install "$(jget "$OUTDIR/repack-broken-all.json" 'd["version"]')" --require-gpu
  fi
  step 5-status 0 status
  [ "$(jget "$OUTDIR/5-status.json" 'd["active"]["version"]')" = "$GOOD" ] || { log "the good build is not active after the rollback"; FAILED=1; }
  step 6-install-truncated 4 --mirror "$URL/trunc/" install "$TRUNC" --require-gpu
else
  step 1-install-good 0 --mirror "$URL/good/" install "$GOOD"
  step 1b-require-gpu 7 --mirror "$URL/broken/" install "$BROKEN" --require-gpu
  step 2-smoke 0 smoke
  step 3-verify-smoke 0 verify --smoke
  log "without a GPU nothing can see the zeroed kernels: the broken build installs (smoke skipped)"
  step 4-install-broken 0 --mirror "$URL/broken/" install "$BROKEN"
  step 4-rollback 0 rollback
  step 6-install-truncated 4 --mirror "$URL/trunc/" install "$TRUNC"
fi
step 7-history 0 history
python3 - "$OUTDIR/7-history.json" <<'EOF' | tee -a "$OUTDIR/log.txt"
import json, sys
for r in json.load(open(sys.argv[1]))["data"]["history"]:
    to = (r.get("to") or {}).get("version", "-")
    print("    history: %-8s %-12s -> %s %s" % (r["command"], r["result"], to, (r.get("message") or "")[:120]))
EOF

{
  echo "cuDNN source: $LIBDIR ($INCDIR), label $LABEL, CUDA $CUDA"
  echo "GPU: $([ "$HAVE_GPU" -eq 1 ] && echo yes || echo no)"
  printf '%s\n' "${SUMMARY[@]}"
  echo "total: $(since "$T0") s"
} >"$OUTDIR/summary.txt"
log "summary in $OUTDIR/summary.txt"
cat "$OUTDIR/summary.txt"
[ "$FAILED" -eq 0 ] || exit 1
[ "$HAVE_GPU" -eq 1 ] || exit 3
exit 0
