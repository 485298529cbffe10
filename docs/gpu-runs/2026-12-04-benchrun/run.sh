#!/bin/bash
# The device call of 2026-12-04 for issue 21: `bench/run --only repack` itself (not bench.py
# beside it) on the GPU machine, with the build of a862d12 (bench/run printed 97c6ec3: the call ran
# before that commit, on its uncommitted tree: 97c6ec3 plus util/cores), first on all 16 cores, then with the whole
# run (cudnnctl, nginx, zstd -dc, curl) pinned to two cores with taskset, the core count of
# the 2-core VM whose row misses "vs zstd -dc".
#   bash docs/gpu-runs/2026-12-04-benchrun/run.sh
# carry: .carry/d28 (build/: cudnnctl with RUNPATH $ORIGIN/lib, cudnnctl-smoke,
# lib/libarchive.so.13; bin/: nginx, zstd, GNU time) and bench/.cache/stub-9.18.1 (the stub
# release bench/run would otherwise compile: the GPU machine has no compiler).
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/.carry/d28
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
echo "== $(date -u) $(uname -r) nproc $(nproc)"; uptime
chmod +x "$C"/bin/* "$C"/build/cudnnctl*
export PATH=$C/bin:$PATH BENCH_GNU_TIME=$C/bin/time BENCH_XZ_THREADS=16 CUDNNCTL=$C/build/cudnnctl
mkdir -p /var/log/nginx /var/lib/nginx
nvidia-smi --query-gpu=name,persistence_mode,compute_cap,driver_version --format=csv
BENCH_CUDA=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1)
export BENCH_CUDA
echo "== bench/run --runs ${RUNS:-5} --only repack: 16 cores"
bash "$R/bench/run" --runs "${RUNS:-5}" --only repack --tmp /tmp
echo "== bench/run --runs ${RUNS2:-3} --only repack: taskset -c 0,1"
taskset -c 0,1 bash "$R/bench/run" --runs "${RUNS2:-3}" --only repack --tmp /tmp
mkdir -p "$O/results" && cp -r "$R"/bench/.cache/results-* "$O/results/"
echo "== done $(date -u)"; uptime
