#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The GPU proof of issue 17's library pass, on a machine with NVIDIA GPUs (docs/GPU.md records
# a run). Needs no installed cudnnctl: it drives the smoke and bench libraries through
# cudnnctl_benchtool (tests/benchtool), the children cudnnctl-smoke and cudnnctl-bench beside
# it, and the real cuDNN builds found on the machine.
#
#   scripts/gpu/gpu_truth.sh --bin DIR --out DIR [--cudnn LABEL=/abs/libcudnn.so.9]...
#                            [--baseline LABEL] [--bench-args "..."] [--no-zeroed]
#
# DIR holds cudnnctl_benchtool, cudnnctl-smoke, cudnnctl-bench (and libraries they lack).
# Without --cudnn: apt's /usr/lib/x86_64-linux-gnu/libcudnn.so.9 and PyTorch's pip
# .../site-packages/nvidia/cudnn/lib/libcudnn.so.9, labelled by their version.
# Steps, each with its own timeout, logs in --out:
#   1. machine.txt: nvidia-smi, the driver banner; gpus.json: the inventory and
#      gpu::check_support of the builds found (and of 9.10.2 / 9.11.0 for CUDA 12)
#   2. smoke-<label>-{1,2}.json: smoke::run_smoke on every build, twice (first run loads the
#      library from disk); smoke-<label>.jsonl: the helper's own lines (per-operation ms)
#   3. smoke-zeroed.json: the last build's copy with the .nv_fatbin of its engine
#      libraries zeroed (scripts/gpu/repack.py's zero_fatbin): must fail, naming the operation
#   4. bench.txt/.json/.csv/.svg: bench::run of every build, every workload, every GPU
#   5. summary.txt
set -uo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=""
OUT=""
BASELINE=""
BENCH_ARGS=""
ZEROED=1
declare -a CUDNN=()
while [ $# -gt 0 ]; do
  case $1 in
  --bin) BIN=$(cd "$2" && pwd); shift 2 ;;
  --out) OUT=$2; shift 2 ;;
  --cudnn) CUDNN+=("$2"); shift 2 ;;
  --baseline) BASELINE=$2; shift 2 ;;
  --bench-args) BENCH_ARGS=$2; shift 2 ;;
  --no-zeroed) ZEROED=0; shift ;;
  -h | --help) sed -n '3,24p' "${BASH_SOURCE[0]}"; exit 0 ;;
  *) echo "gpu_truth.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$BIN" ] && [ -n "$OUT" ] || { echo "gpu_truth.sh: --bin and --out are required" >&2; exit 2; }
mkdir -p "$OUT"
TOOL=$BIN/cudnnctl_benchtool
export CUDNNCTL_SMOKE_HELPER=$BIN/cudnnctl-smoke CUDNNCTL_BENCH_HELPER=$BIN/cudnnctl-bench
T0=$EPOCHREALTIME
since() { local us=$((${EPOCHREALTIME/./} - ${1/./})); printf '%d.%d' $((us / 1000000)) $((us / 100000 % 10)); }
log() { printf '[%6ss] %s\n' "$(since "$T0")" "$*" | tee -a "$OUT/summary.txt"; }

version_of() { # LIBDIR -> M.m.p from the library file names, else the header beside it
  local f
  f=$(ls "$1"/libcudnn_graph.so.9.* 2>/dev/null | head -1)
  [ -n "$f" ] && { basename "$f" | sed 's/^libcudnn_graph\.so\.//'; return; }
  f=$(ls -d "$1"/../../../nvidia_cudnn_cu*-*.dist-info 2>/dev/null | head -1)
  [ -n "$f" ] && { basename "$f" | sed -E 's/^nvidia_cudnn_cu[0-9]+-([0-9.]+)\.dist-info$/\1/'; return; }
  echo unknown
}
if [ ${#CUDNN[@]} -eq 0 ]; then
  for lib in /usr/lib/x86_64-linux-gnu/libcudnn.so.9 /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9; do
    [ -e "$lib" ] && CUDNN+=("$(version_of "$(dirname "$lib")")=$lib")
  done
fi
[ ${#CUDNN[@]} -gt 0 ] || { log "no cuDNN found"; exit 1; }
[ -n "$BASELINE" ] || BASELINE=${CUDNN[0]%%=*}

log "1. machine"
{ uname -a; cat /proc/driver/nvidia/version 2>&1; nvidia-smi 2>&1 | head -30
  nvidia-smi --query-gpu=index,name,uuid,compute_cap,memory.total,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,mig.mode.current --format=csv 2>&1
  for c in "${CUDNN[@]}"; do echo "cuDNN ${c%%=*}: ${c#*=} -> $(readlink -f "${c#*=}")"; done
  readelf -d "$BIN/cudnnctl-smoke" "$BIN/cudnnctl-bench" | grep -E 'RPATH|RUNPATH' || echo "children: no RPATH/RUNPATH"
} >"$OUT/machine.txt" 2>&1
checks=()
for c in "${CUDNN[@]}"; do checks+=(--check "${c%%=*}:13"); done
timeout 60 "$TOOL" gpus "${checks[@]}" --check 9.10.2:12 --check 9.11.0:12 >"$OUT/gpus.json" 2>"$OUT/gpus.err"
log "   gpus: exit $? ($(grep -c '"compute_capability"' "$OUT/gpus.json") GPU record(s))"

log "2. smoke on every build, twice"
for c in "${CUDNN[@]}"; do
  label=${c%%=*}; lib=${c#*=}
  for n in 1 2; do
    t=$EPOCHREALTIME
    timeout 60 "$TOOL" smoke "$lib" --timeout 45 >"$OUT/smoke-$label-$n.json" 2>&1
    log "   smoke $label run $n: exit $? in $(since "$t") s: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"], "|", "; ".join("GPU %d %s %.0f ms %d/%d ops" % (g["gpu"], g["status"], g["ms"], sum(o["status"]=="passed" for o in g["ops"]), len(g["ops"])) for g in d["gpus"]))' "$OUT/smoke-$label-$n.json" 2>&1 | head -c 400)"
  done
  # The helper alone, with cuDNN's own warnings and errors on stderr (CUDNN_LOGLEVEL_DBG=2).
  env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" CUDNN_LOGLEVEL_DBG=2 \
    CUDNN_LOGDEST_DBG=stderr timeout 60 "$BIN/cudnnctl-smoke" --smoke "$lib" \
    >"$OUT/smoke-$label.jsonl" 2>"$OUT/smoke-$label.err"
  log "   helper lines $label: exit $?"
done

if [ "$ZEROED" -eq 1 ]; then
  log "3. zeroed GPU kernels (a build only the GPU can catch)"
  first=${CUDNN[${#CUDNN[@]}-1]#*=} # the last: pip's regular files copy without link chains
  Z=$(mktemp -d /tmp/cudnn-zeroed.XXXXXX)
  cp -aL "$(dirname "$first")"/libcudnn*.so* "$Z"/ 2>/dev/null
  python3 - "$Z" "$HERE" >"$OUT/zeroed.txt" 2>&1 <<'EOF'
import glob, os, sys
sys.path.insert(0, sys.argv[2])
import repack
for f in sorted(glob.glob(os.path.join(sys.argv[1], "libcudnn_engines_*"))):
    if os.path.islink(f):
        continue
    print(f, repack.zero_fatbin(f))
EOF
  timeout 60 "$TOOL" smoke "$Z/$(basename "$first")" --timeout 45 >"$OUT/smoke-zeroed.json" 2>&1
  log "   zeroed: exit $? (8 expected): $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"], "|", d["message"][:300])' "$OUT/smoke-zeroed.json" 2>&1)"
  rm -rf "$Z"
fi

log "4. bench"
vers=()
for c in "${CUDNN[@]}"; do vers+=(--version "$c"); done
# shellcheck disable=SC2086
timeout 330 "$TOOL" bench "${vers[@]}" --baseline "$BASELINE" --timeout 150 $BENCH_ARGS \
  --json "$OUT/bench.json" --csv "$OUT/bench.csv" --plot "$OUT/bench.svg" >"$OUT/bench.txt" 2>"$OUT/bench-progress.txt"
log "   bench: exit $?"
cat "$OUT/bench-progress.txt" | tee -a "$OUT/summary.txt"
cat "$OUT/bench.txt" >>"$OUT/summary.txt"
log "done"
