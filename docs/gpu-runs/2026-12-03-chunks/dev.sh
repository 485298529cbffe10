#!/bin/bash
# A device call for issue 21 (2026-12-03 afternoon): what the pass would take without each of
# its two sequential SHA-256s. The ablation build is dded7c8 + ablation.patch (env switches and
# the X_TRACE lines; never merged). ab.py's alternated rounds from file:// over main's framed repack
# for main (dded7c8) and an ablation build (main + env switches, not merged: X_NOSTREAM skips
# the stream's SHA-256 and takes the digest as matching, X_NOFILE skips the files' SHA-256 and
# takes the sidecar's): nostream, nofile, nohash (both); run-ablate.txt. Second call
# (run-ablate2.txt): X_NOCACHESYNC (the cache file's sync_file_range and fsync skipped),
# X_NOCACHE (no cache file written at all), X_NOFILESYNC (the staged files' writeback and
# the staging fsync skipped), and their mixes; plus dd's write speed of this disk. Third call
# (run-trace.txt, AB3=1): ab3.py with the ablation build's X_TRACE lines (when the extraction
# thread reached each point, per-thread CPU, run-queue wait and context switches), X_DEC
# (decoder threads) and X_SLOTS (the file writer's buffers).
#   bash docs/gpu-runs/2026-12-03-chunks/dev.sh   (carry: .carry/d22: bld-*/ each cudnnctl
#   (RUNPATH $ORIGIN/lib) + cudnnctl-smoke + lib/libarchive.so.13; one wrapper folder per
#   variant; bin/ with nginx, zstd, GNU time)
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/.carry/d22
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
echo "== $(date -u) $(uname -r) nproc $(nproc)"; uptime
chmod +x "$C"/bin/* "$C"/*/cudnnctl*
export PATH=$C/bin:$PATH BENCH_GNU_TIME=$C/bin/time
grep -m1 "model name" /proc/cpuinfo; grep -m1 -o -w -E "sha_ni|avx512f|avx2" /proc/cpuinfo | sort -u | tr '\n' ' '; echo
lscpu | grep -E "Thread|Core|Socket|MHz" | head -5
command -v openssl >/dev/null && openssl speed -seconds 1 -bytes 1048576 -evp sha256 2>/dev/null | tail -2
df -h /tmp | tail -1; cat /sys/block/vda/queue/scheduler 2>/dev/null; sysctl vm.dirty_ratio vm.dirty_background_ratio 2>/dev/null
for i in 1 2; do dd if=/dev/zero of=/tmp/ddtest bs=1M count=800 conv=fsync 2>&1 | tail -1; rm -f /tmp/ddtest; done
dd if=/dev/zero of=/tmp/ddtest bs=1M count=800 2>&1 | tail -1; rm -f /tmp/ddtest
PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1); echo "pip cudnn: $PIP"
t0=$(date +%s.%N)
M=$(BENCH_CUDA=$PIP BENCH_XZ_THREADS=16 bash "$R/bench/build_archive.sh" /tmp/bc) || { echo "build_archive failed"; exit 1; }
echo "archive built in $(python3 -c "import time; print('%.1f' % (time.time() - $t0))") s: $M"
echo "== ab.py: ${ROUNDS:-10} alternated rounds from file://, main's framed site: ${AB_BINS:-nostream nofile nohash main}"
AB=$R/docs/gpu-runs/2026-12-02-cachewriter/ab.py; [ -n "$AB3" ] && AB=$R/docs/gpu-runs/2026-12-03-chunks/ab3.py
PYTHONUNBUFFERED=1 python3 "$AB" "$C" "$M" /tmp/ab "${ROUNDS:-10}" ${AB_BINS:-nostream nofile nohash main}
echo "== done $(date -u)"; uptime
