#!/bin/bash
# A device call for issue 21: the warm probe retaining GPU 0's primary context, and judged on
# its exit line (not waiting for the kernel's teardown of that context). bench.py --only
# repack for the build before (main ab484ca) and after, back to back, then stamped -vv
# installs and the warm probe of the after build. Run twice: run-1622.txt (after = the
# context only), run-1634.txt (after = the context and the exit line; device clock).
#   bash docs/gpu-runs/2026-12-02-warmctx/dev.sh   (carry: .carry/d21 with before/ and after/,
#   each cudnnctl (RUNPATH $ORIGIN/lib) + cudnnctl-smoke + lib/libarchive.so.13; bin/ with
#   nginx, zstd, GNU time; stub/ the stub-9.18.1 mirror)
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/.carry/d21
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
echo "== $(date -u) $(uname -r) nproc $(nproc)"; uptime
chmod +x "$C"/bin/* "$C"/*/cudnnctl*
export PATH=$C/bin:$PATH BENCH_GNU_TIME=$C/bin/time
mkdir -p /var/log/nginx /var/lib/nginx
ldd "$C/after/cudnnctl" | grep -E "not found|archive"
nvidia-smi --query-gpu=name,persistence_mode,compute_cap,driver_version --format=csv
PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1); echo "pip cudnn: $PIP"
t0=$(date +%s.%N)
M=$(BENCH_CUDA=$PIP BENCH_XZ_THREADS=16 bash "$R/bench/build_archive.sh" /tmp/bc) || { echo "build_archive failed"; exit 1; }
echo "archive built in $(python3 -c "import time; print('%.1f' % (time.time() - $t0))") s: $M"
for b in ${BINS:-before after}; do
  echo "== bench.py --only repack --runs 3: $b"
  python3 "$R/bench/bench.py" --cudnnctl "$C/$b/cudnnctl" --mirror "$M" --stub-mirror "$C/stub" \
    --out "$O/bench-$b" --runs 3 --only repack --tmp /tmp
done
echo "== stamped -vv installs from a file:// site, and the probe's loads (after)"
PYTHONUNBUFFERED=1 python3 "$R/docs/gpu-runs/2026-12-02-repack2/stamp.py" "$C/after" "$M" /tmp/r21s
echo "== done $(date -u)"; uptime
