#!/bin/bash
# A/B device calls (issue 21): ab.py over the builds in .carry/d21. ab-1706.txt: before = main
# f51cce5, after = f51cce5 + cachewriter.patch (the .partial's writes on their own thread; not
# merged: no gain). ab-1712.txt: after = the -vv producer waits (main 39294fc). Not run on the
# GPU machine (no device time left): before = 39294fc, after = + pipe-batch.patch (the byte
# pipe's batched hand-offs); ab-local-pipe-batch.txt is that A/B on the 2-core build VM.
#   bash docs/gpu-runs/2026-12-02-cachewriter/ab.sh   (carry: .carry/d21 as for ../2026-12-02-warmctx/dev.sh)
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/.carry/d21
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/ab.txt") 2>&1
echo "== $(date -u) nproc $(nproc)"; uptime
chmod +x "$C"/bin/* "$C"/*/cudnnctl*
export PATH=$C/bin:$PATH
PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1)
M=$(BENCH_CUDA=$PIP BENCH_XZ_THREADS=16 bash "$R/bench/build_archive.sh" /tmp/bc) || { echo "build_archive failed"; exit 1; }
PYTHONUNBUFFERED=1 python3 "$R/docs/gpu-runs/2026-12-02-cachewriter/ab.py" "$C" "$M" /tmp/ab "${ROUNDS:-10}" ${BINS:-before after}
echo "== done $(date -u)"; uptime
