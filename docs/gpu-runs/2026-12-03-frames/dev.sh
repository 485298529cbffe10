#!/bin/bash
# A device call for issue 21: the repack as independent 1 MiB zstd frames, decoded on several
# threads at install (archive/zstd_decoder.*). bench.py --only repack --runs 3 for the build
# before (main 87d92c6: libarchive's one zstd stream) and after, back to back (each build
# repacks its own site), then ab.py: both builds alternated over the after build's site
# (the framed repack: before reads it through libarchive, after through the decoders).
# run-0955.txt: the first call (frames with xxh64 checksums); run-1004.txt: AB2=1, frames
# without checksums, two decoders; run-1017.txt: BENCH_BINS=pipe AB_BINS="after pipe", pipe = after
# + ../2026-12-02-cachewriter/pipe-batch.patch (the byte pipe's batched hand-offs);
# run-1051.txt: BENCH_BINS=order AB2=1 AB_BINS="pipe order", order = pipe + the repack's files
# largest first (order.patch; each build installs the repack it wrote): no gain, not merged.
#   bash docs/gpu-runs/2026-12-03-frames/dev.sh   (carry: .carry/d21 with before/ and after/,
#   each cudnnctl (RUNPATH $ORIGIN/lib) + cudnnctl-smoke + lib/libarchive.so.13; bin/ with
#   nginx, zstd, GNU time; stub/ the stub-9.18.1 mirror)
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/.carry/d21
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
echo "== $(date -u) $(uname -r) nproc $(nproc)"; uptime
chmod +x "$C"/bin/* "$C"/*/cudnnctl*
export PATH=$C/bin:$PATH BENCH_GNU_TIME=$C/bin/time
mkdir -p /var/log/nginx /var/lib/nginx
ldd "$C/after/cudnnctl" | grep -E "not found|archive|zstd"
nvidia-smi --query-gpu=name,persistence_mode,compute_cap,driver_version --format=csv
PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1); echo "pip cudnn: $PIP"
t0=$(date +%s.%N)
M=$(BENCH_CUDA=$PIP BENCH_XZ_THREADS=16 bash "$R/bench/build_archive.sh" /tmp/bc) || { echo "build_archive failed"; exit 1; }
echo "archive built in $(python3 -c "import time; print('%.1f' % (time.time() - $t0))") s: $M"
for b in ${BENCH_BINS:-before after}; do
  echo "== bench.py --only repack --runs 3: $b"
  python3 "$R/bench/bench.py" --cudnnctl "$C/$b/cudnnctl" --mirror "$M" --stub-mirror "$C/stub" \
    --out "$O/bench-$b" --runs 3 --only repack --tmp /tmp
done
if [ -n "$AB2" ]; then
  echo "== ab2.py: ${ROUNDS:-8} rounds, each build from the site it writes, zstd -dc of both repacks"
  PYTHONUNBUFFERED=1 python3 "$R/docs/gpu-runs/2026-12-03-frames/ab2.py" "$C" "$M" /tmp/ab2 "${ROUNDS:-8}" ${AB_BINS:-before after}
else
  echo "== ab.py: ${ROUNDS:-8} alternated rounds from file://, the after build's (framed) site"
  PYTHONUNBUFFERED=1 python3 "$R/docs/gpu-runs/2026-12-02-cachewriter/ab.py" "$C" "$M" /tmp/ab "${ROUNDS:-8}" ${AB_BINS:-before after}
fi
echo "== done $(date -u)"; uptime
