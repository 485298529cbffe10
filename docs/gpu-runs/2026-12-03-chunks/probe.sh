#!/bin/bash
# A device call for issue 21: how long the runtime probe's warm-up (cudnnctl-smoke --probe
# --warm: the driver, cuInit, the first GPU's primary context) and the GPU inventory
# (cudnnctl-smoke --gpus) take, alone and side by side as install starts them (run-probe.txt).
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/.carry/d22
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
echo "== $(date -u) nproc $(nproc)"; chmod +x "$C"/bin/* "$C"/*/cudnnctl*
S=$C/bld-main/cudnnctl-smoke; T=$C/bin/time
nvidia-smi --query-gpu=name,persistence_mode --format=csv,noheader
ms() { python3 -c 'import time; print("%.0f" % (time.monotonic() * 1000))'; }
for i in 1 2 3 4; do
  $T -f "gpus alone: %e s" $S --gpus >/dev/null
  echo | $T -f "warm alone: %e s (whole process)" $S --probe /tmp --shim libcudnn.so.9 --warm | grep -o '"event": *"warm".*'
  # side by side, as install starts them: the inventory first, the warm probe a moment later
  ( $T -f "  gpus beside: %e s" $S --gpus >/dev/null & sleep 0.01; echo | $T -f "  warm beside: %e s" $S --probe /tmp --shim libcudnn.so.9 --warm | grep -o '"ms".*'; wait )
done
echo "== done $(date -u)"
# Then (AB_BINS set): ab3.py's alternated rounds over the chunks build's site.
if [ -n "$AB_BINS" ]; then
  M=$(BENCH_CUDA=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1) BENCH_XZ_THREADS=16 bash "$R/bench/build_archive.sh" /tmp/bc) || exit 1
  export PATH=$C/bin:$PATH
  PYTHONUNBUFFERED=1 python3 "$R/docs/gpu-runs/2026-12-03-chunks/ab3.py" "$C" "$M" /tmp/ab "${ROUNDS:-8}" $AB_BINS
fi
