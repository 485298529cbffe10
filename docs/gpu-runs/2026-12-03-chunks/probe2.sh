#!/bin/bash
# A device call for issue 21 (run-probe2.txt): where `cudnnctl-smoke --gpus` (install's GPU
# inventory, 0.33 to 0.48 s in run-probe.txt) spends its time: as is, and with NVML hidden
# (libnvidia-ml.so.1 bind-mounted over by /dev/null in a private mount namespace, so that its
# dlopen fails and the inventory goes on without NVML); the per-GPU line's "ms" is its context.
#   bash docs/gpu-runs/2026-12-03-chunks/probe2.sh   (carry: .carry/d24: cudnnctl-smoke, GNU time)
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/.carry/d24
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
chmod +x "$C"/*; S=$C/cudnnctl-smoke; T=$C/time
NV=$(ldconfig -p | awk '/libnvidia-ml.so.1 /{print $NF; exit}'); echo "NVML: $NV"
for i in 1 2 3 4; do
  $T -f "gpus: %e s" $S --gpus | grep -o '"ms": *[0-9.]*' | tr '\n' ' '; echo
  unshare -m sh -c "mount --bind /dev/null $NV && $T -f 'gpus without NVML: %e s' $S --gpus" | grep -o '"ms": *[0-9.]*' | tr '\n' ' '; echo
  echo | $T -f "warm: %e s" $S --probe /tmp --shim libcudnn.so.9 --warm | grep -o '"ms": *[0-9.]*'
done
echo "== done $(date -u)"
