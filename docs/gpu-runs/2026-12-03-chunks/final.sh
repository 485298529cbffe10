#!/bin/bash
# The closing device call of 2026-12-03 for issue 21 (run-final.txt): bench/bench.py --only
# repack --runs 3 for main before (dded7c8) and after (the cache entry not fsynced + chunk
# digests), each build repacking its own site, then ab.py's alternated rounds from file://
# over the after build's site (chunk digests: before ignores them).
#   bash docs/gpu-runs/2026-12-03-chunks/final.sh   (carry: .carry/d23 with before/ and after/,
#   each cudnnctl (RUNPATH $ORIGIN/lib) + cudnnctl-smoke + lib/libarchive.so.13; bin/ with
#   nginx, zstd, GNU time; stub/ the stub-9.18.1 mirror)
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/.carry/d23
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
echo "== $(date -u) $(uname -r) nproc $(nproc)"; uptime
chmod +x "$C"/bin/* "$C"/*/cudnnctl*
export PATH=$C/bin:$PATH BENCH_GNU_TIME=$C/bin/time
mkdir -p /var/log/nginx /var/lib/nginx
nvidia-smi --query-gpu=name,persistence_mode,compute_cap,driver_version --format=csv
PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1)
M=$(BENCH_CUDA=$PIP BENCH_XZ_THREADS=16 bash "$R/bench/build_archive.sh" /tmp/bc) || { echo "build_archive failed"; exit 1; }
for b in ${BENCH_BINS:-after before}; do
  echo "== bench.py --only repack --runs 3: $b"
  python3 "$R/bench/bench.py" --cudnnctl "$C/$b/cudnnctl" --mirror "$M" --stub-mirror "$C/stub" \
    --out "$O/bench-$b" --runs 3 --only repack --tmp /tmp
done
echo "== ab.py: ${ROUNDS:-10} alternated rounds from file://, the after build's site"
PYTHONUNBUFFERED=1 python3 "$R/docs/gpu-runs/2026-12-02-cachewriter/ab.py" "$C" "$M" /tmp/ab "${ROUNDS:-10}" before after
echo "== done $(date -u)"; uptime
