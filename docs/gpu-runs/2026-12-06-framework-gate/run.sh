#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 36 on the GPU machine (Ubuntu 24.04, /opt/torch/.venv with torch 2.11.0+cu130 whose
# METADATA pins nvidia-cudnn-cu13==9.19.0.56, the held apt cuDNN 9.14 in /usr/lib/x86_64-linux-gnu):
# the framework gate against the real torch.
#   bash docs/gpu-runs/2026-12-06-framework-gate/run.sh   (repo root; carry: [".carry/gate"]
#   with cudnnctl and cudnnctl-smoke of branch `gate`; $OUT)
# The pip cuDNN (site-packages/nvidia/cudnn) is moved aside so that torch loads libcudnn.so.9
# through the loader, as a conda/source torch or an image without the nvidia wheels does; it is
# put back by the EXIT trap, which also purges what cudnnctl installed (prefix
# /opt/cudnnctl-gate on the real root: the loader drop-in 00-cudnnctl.conf and ldconfig are
# what torch sees) and removes the config.toml it wrote (manage_cuda_home = false: the CUDA home
# is left alone). Steps: install 9.14 (--force: the gate warns that torch breaks), install
# 9.19 (the gate passes), torch runs a convolution on it; `use 9.14.0.90` refused (exit 7) and
# torch still works; `--force use 9.14.0.90` (torch then fails at import), check exit 8, rollback,
# torch works again. Each step's exit code against the expected one in $OUT/summary.txt.
set -u
R=$(cd "$(dirname "$0")/../../.." && pwd)
C=$R/.carry/gate
O=${OUT:-/tmp/out-gate}
mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
W=$(mktemp -d /tmp/gate36.XXXXXX)
PY=/opt/torch/.venv/bin/python
SITE=$(ls -d /opt/torch/.venv/lib/python3*/site-packages | head -1)
PIP=$SITE/nvidia/cudnn
PFX=/opt/cudnnctl-gate
chmod +x "$C"/cudnnctl*
export CUDNNCTL_SMOKE_HELPER=$C/cudnnctl-smoke
declare -a SUMMARY
step() { # NAME EXPECTED CMD...: output appended to $O/outputs.txt, the exit code recorded
  local name=$1 want=$2 rc=0
  shift 2
  timeout 300 bash -c '"$@"' _ "$@" >"$W/step.out" 2>"$W/step.err" || rc=$?
  SUMMARY+=("$(printf '%-28s exit %-3s expected %s' "$name" "$rc" "$want")")
  { echo "=== $name: exit $rc (expected $want): $*"; cat "$W/step.out"; echo "--- stderr"; cat "$W/step.err"; } >>"$O/outputs.txt"
  tail -n 4 "$W/step.out" "$W/step.err"
}
ci() { LD_LIBRARY_PATH=$C/lib "$C/cudnnctl" --prefix "$PFX" --cuda 13 "$@"; }
export C PFX PY
torch_conv() { # what torch loads and a convolution on the GPU
  env -u LD_LIBRARY_PATH "$PY" -c '
import torch
print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())
x = torch.randn(8, 64, 56, 56, device="cuda"); w = torch.randn(64, 64, 3, 3, device="cuda")
print("conv", torch.nn.functional.conv2d(x, w, padding=1).float().abs().mean().item())
print([l.split()[-1] for l in open("/proc/self/maps") if "libcudnn.so" in l][:1])'
}
export -f ci torch_conv # step runs them under timeout
cleanup() {
  { echo "=== cleanup: --force purge --yes"; ci --force purge --yes 2>&1; } >>"$O/outputs.txt" || echo "purge failed: see outputs.txt"
  [ -n "${WROTE_CONFIG:-}" ] && rm -f /etc/cudnnctl/config.toml
  [ -d "$PIP.gate-aside" ] && mv "$PIP.gate-aside" "$PIP"
  [ -n "${HTTP:-}" ] && kill "$HTTP"
  ls -d "$PIP" >>"$O/machine.txt" 2>&1
  printf '%s\n' "${SUMMARY[@]}" | tee "$O/summary.txt"
}
trap cleanup EXIT
{ date -u; nvidia-smi -L; LD_LIBRARY_PATH=$C/lib "$C/cudnnctl" --version; grep -i '^Requires-Dist: nvidia-cudnn' "$SITE"/torch-*.dist-info/METADATA; } >"$O/machine.txt" 2>&1
cat "$O/machine.txt"
M=$W/mirror
python3 "$R/scripts/gpu/repack.py" --lib-dir /usr/lib/x86_64-linux-gnu --include-dir /usr/include/x86_64-linux-gnu \
  --mirror "$M/apt" --build 90 --cuda 13 --print >>"$O/outputs.txt" 2>&1 || exit 1
python3 "$R/scripts/gpu/repack.py" --lib-dir "$PIP/lib" --include-dir "$PIP/include" \
  --mirror "$M/pip" --build 90 --cuda 13 --print >>"$O/outputs.txt" 2>&1 || exit 1
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$M" && exec python3 -m http.server --bind 127.0.0.1 "$PORT") >"$W/http.log" 2>&1 &
HTTP=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
URL=http://127.0.0.1:$PORT
if [ ! -e /etc/cudnnctl/config.toml ]; then
  mkdir -p /etc/cudnnctl && printf 'manage_cuda_home = false\nmodule_files = false\n' >/etc/cudnnctl/config.toml
  WROTE_CONFIG=1
fi
mv "$PIP" "$PIP.gate-aside" || exit 1
step 00-torch-apt914 '!0' torch_conv # the loader gives it apt's 9.14: the RuntimeError of the issue
step 01-install-914-force 0 ci --mirror "$URL/apt/" --force install 9.14.0.90 --require-gpu
step 02-install-919 0 ci --mirror "$URL/pip/" --json install 9.19.0.90 --require-gpu
step 03-torch-919 0 torch_conv
step 04-use-914-refused 7 ci use 9.14.0.90
step 05-use-914-dryrun-json 7 ci --json --dry-run use 9.14.0.90
step 06-torch-still-919 0 torch_conv
step 07-check-ok 0 ci check
step 08-use-914-force 0 ci --force use 9.14.0.90
step 09-torch-on-914 '!0' torch_conv
step 10-check-drift 8 ci check --prometheus "$W/gate.prom" --nfd "$W/gate.nfd"
{ echo "=== gate.prom, gate.nfd"; cat "$W/gate.prom" "$W/gate.nfd"; } >>"$O/outputs.txt" 2>&1
step 11-rollback 0 ci --json rollback
step 12-torch-back-919 0 torch_conv
step 13-doctor "0 or 8" ci doctor # other findings (the apt copy) may make it 8
step 14-recommend 0 ci recommend # no --framework: the frameworks found on the node
step 15-purge-refused 7 ci purge --yes # torch would then load apt's 9.14
