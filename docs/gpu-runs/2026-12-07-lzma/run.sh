#!/bin/bash
# The device call of 2026-12-07 for issue 35: the portable release's .deb (af0ec61 + liblzma
# 5.8.1 from Debian 13, scripts/lib/release-x86_64.bash) installed on the GPU machine (Ubuntu
# 24.04, its own xz 5.4.5 in the recipe's `tar -xJf`), then `bench/run --only install` with it,
# on all 16 cores and pinned to two (the core count of the VM that bench/run's table is from).
#   bash docs/gpu-runs/2026-12-07-lzma/run.sh
# carry: .carry/d35 (cudnnctl_0.1.0-1_amd64.deb; bin/: nginx and GNU time from Debian 12) and
# bench/.cache/stub-9.18.1 (the stub release bench/run would otherwise compile).
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/.carry/d35
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
echo "== $(date -u) $(uname -r) nproc $(nproc) $(. /etc/os-release; echo "$PRETTY_NAME")"; uptime
chmod +x "$C"/bin/*
echo "== dpkg -i the release's .deb"
dpkg -i "$C"/cudnnctl_0.1.0-1_amd64.deb || exit 1
dpkg-query -W cudnnctl; cudnnctl --version; cudnnctl --version --json; xz --version | head -2
export PATH=$C/bin:$PATH BENCH_GNU_TIME=$C/bin/time BENCH_XZ_THREADS=16 CUDNNCTL=/usr/bin/cudnnctl
mkdir -p /var/log/nginx /var/lib/nginx
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
BENCH_CUDA=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1)
export BENCH_CUDA
echo "== bench/run --runs ${RUNS:-5} --only install: 16 cores"
bash "$R/bench/run" --runs "${RUNS:-5}" --only install --tmp /tmp
echo "== bench/run --runs ${RUNS2:-3} --only install: taskset -c 0,1"
taskset -c 0,1 bash "$R/bench/run" --runs "${RUNS2:-3}" --only install --tmp /tmp
mkdir -p "$O/results" && cp -r "$R"/bench/.cache/results-* "$O/results/"
echo "== dpkg -P cudnnctl"
dpkg -P cudnnctl
echo "== done $(date -u)"; uptime
