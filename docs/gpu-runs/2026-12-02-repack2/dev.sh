#!/bin/bash
# One device call for issue 21: bench/bench.py --only repack on the H200 machine (the archive
# built there from the image's pip cuDNN 9.19, xz -T16), then where the time outside the pass
# goes: the GPU inventory child, the runtime probe's loads, stamped -vv installs.
#   bash docs/gpu-runs/2026-12-02-repack2/dev.sh   (carry: .carry/d21)
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/.carry/d21
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
echo "== $(date -u) $(uname -r) nproc $(nproc)"; uptime; lscpu | grep -i "model name"; df -h /tmp | tail -1
chmod +x "$C"/bin/* "$C"/cudnnctl*
export PATH=$C/bin:$PATH BENCH_GNU_TIME=$C/bin/time
mkdir -p /var/log/nginx /var/lib/nginx
for t in zstd xz curl python3 tar nginx time ldconfig; do echo "$t: $(command -v $t || echo MISSING)"; done
ldd "$C/cudnnctl" | grep -E "not found|archive"
nvidia-smi --query-gpu=name,persistence_mode,compute_cap,driver_version --format=csv
PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1); echo "pip cudnn: $PIP"
t0=$(date +%s.%N)
M=$(BENCH_CUDA=$PIP BENCH_XZ_THREADS=16 bash "$R/bench/build_archive.sh" /tmp/bc) || { echo "build_archive failed"; exit 1; }
echo "archive built in $(python3 -c "import time; print('%.1f' % (time.time() - $t0))") s: $M"
echo "== GPU inventory child (cudnnctl-smoke --gpus), 3 times"
for i in 1 2 3; do /usr/bin/env time -f "%e s wall" "$C/cudnnctl-smoke" --gpus >/dev/null; done 2>&1
for i in 1 2; do /usr/bin/env time -f "nvidia-smi %e s wall" nvidia-smi --query-gpu=compute_cap --format=csv,noheader; done 2>&1
grep -o -w -m1 -E "sha_ni|sha" /proc/cpuinfo | head -1 | sed 's/^/cpu flag: /'
openssl speed -evp sha256 -bytes 1048576 -seconds 1 2>/dev/null | tail -1
# BINS="cudnnctl.before cudnnctl": both binaries of .carry/d21, one after the other.
for b in ${BINS:-cudnnctl}; do
  echo "== bench.py --only repack --runs 3: $b"
  python3 "$R/bench/bench.py" --cudnnctl "$C/$b" --mirror "$M" --stub-mirror "$C/stub" \
    --out "$O/bench-$b" --runs 3 --only repack --tmp /tmp
done
echo "== stamped -vv installs from a file:// site, and the probe's loads"
PYTHONUNBUFFERED=1 python3 "$R/docs/gpu-runs/2026-12-02-repack2/stamp.py" "$C" "$M" /tmp/r21s
echo "== done $(date -u)"; uptime
