#!/bin/bash
# One device call for issue 21 (repack21): tools, a real-size archive from the image's pip
# cuDNN, then dev_repack.py.   bash .carry/repack21/dev.sh
D=$(cd "$(dirname "$0")" && pwd)
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
echo "== $(date -u) $(uname -r) nproc $(nproc)"; uptime; free -g | head -2; df -h /tmp | tail -1
for t in zstd xz curl python3 tar sha256sum ldconfig perf; do echo "$t: $(command -v $t || echo MISSING)"; done
chmod +x "$D"/bin/* "$D"/cudnnctl* 2>/dev/null
command -v xz >/dev/null || export PATH=$PATH:$D/bin
LD_LIBRARY_PATH=$D/lib ldd "$D/cudnnctl" | grep "not found"
PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn 2>/dev/null | head -1)
[ -n "$PIP" ] || PIP=$(python3 -c 'import nvidia.cudnn,os; print(os.path.dirname(nvidia.cudnn.__file__))')
V=$(python3 -c 'import importlib.metadata as m; print(m.version("nvidia-cudnn-cu13"))' 2>/dev/null)
echo "pip cudnn at $PIP, version $V"; ls -la "$PIP/lib" | head -20
t0=$(date +%s.%N)
M=$(BENCH_CUDA=$PIP BENCH_VERSION=${V:-9.19.0.56} BENCH_XZ_THREADS=16 bash "$D/build_archive.sh" /tmp/r21cache) || { echo "build_archive failed"; exit 1; }
echo "archive built in $(python3 -c "import time; print('%.1f' % (time.time() - $t0))") s: $M"; ls -la "$M"/cudnn/linux-x86_64/
PYTHONUNBUFFERED=1 W=/tmp/r21w python3 "$D/dev_repack.py" "$D" "$M" "$O"
echo "== done $(date -u)"; uptime
