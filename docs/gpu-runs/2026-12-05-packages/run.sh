#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 33 on the GPU machine (Ubuntu 24.04, no network, no package registry, no zstd): the
# portable release from scripts/release, as a new user installs it.
#   bash docs/gpu-runs/2026-12-05-packages/run.sh        (repo root; carry: ["dist"]; $OUT)
# 1. dpkg -i dist/cudnnctl_*_amd64.deb (Depends: libc6 (>= 2.31) must resolve on 24.04's t64
#    libraries), the installed /usr/bin/cudnnctl runs; 2. the tarball's install.sh into a
#    temporary prefix; 3. with the .deb's cudnnctl, in a throwaway --root only: the held apt
#    cuDNN 9.14 and PyTorch's pip cuDNN 9.19 repackaged (scripts/gpu/repack.py) on a loopback
#    mirror (python3 -m http.server), install 9.14 with the GPU smoke test, install 9.19, rollback,
#    check, verify; then the same from the tarball's cudnnctl; 4. dpkg --purge: the machine as found.
# Keeps going after a failure (each step's exit code is logged); everything lands in $OUT.
set -u
R=$(cd "$(dirname "$0")/../../.." && pwd)
O=${OUT:-/tmp/out-packages}
mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
set -x
T0=$SECONDS
W=$(mktemp -d /tmp/pkg33.XXXXXX)
declare -a SUMMARY
rec() { SUMMARY+=("$(printf '%-34s exit %-3s expected %-3s %4ss' "$1" "$2" "$3" "$4")"); }
# step NAME EXPECTED CMD...: stdout/stderr into $O/NAME.out/.err, the exit code recorded.
step() {
  local name=$1 want=$2 rc=0 t=$SECONDS
  shift 2
  timeout 240 "$@" >"$O/$name.out" 2>"$O/$name.err" || rc=$?
  rec "$name" "$rc" "$want" "$((SECONDS - t))"
  tail -5 "$O/$name.out" "$O/$name.err"
  return 0
}
{ date -u; uname -a; head -2 /etc/os-release; nvidia-smi -L; ldd --version | head -1; dpkg -l 'libc6' | tail -1; } >"$O/machine.txt" 2>&1
cat "$O/machine.txt"
ls -la "$R/dist" >"$O/dist.txt" 2>&1
(cd "$R/dist" && sha256sum -c ./*.sha256) >"$O/sha256.txt" 2>&1
DEB=$(ls "$R"/dist/cudnnctl_*_amd64.deb | head -1)
TGZ=$(ls "$R"/dist/cudnnctl-*-linux-x86_64.tar.gz | head -1)

# --- 1. the .deb ---
step 01-deb-depends 0 dpkg-deb -f "$DEB" Depends
was_installed=0
dpkg -s cudnnctl >/dev/null 2>&1 && was_installed=1
echo "cudnnctl installed before: $was_installed" >>"$O/machine.txt"
step 02-dpkg-i 0 dpkg -i "$DEB"
step 03-dpkg-s 0 dpkg -s cudnnctl
step 04-deb-version 0 /usr/bin/cudnnctl --version
step 05-deb-ldd 0 ldd /usr/bin/cudnnctl /usr/libexec/cudnnctl/cudnnctl-smoke
step 06-deb-check-portable 0 bash "$R/scripts/check-portable" /usr/bin/cudnnctl /usr/libexec/cudnnctl/cudnnctl-smoke /usr/libexec/cudnnctl/cudnnctl-bench
step 07-deb-files 0 dpkg -L cudnnctl
step 08-verify-unit 0 systemctl cat cudnnctl-verify.service

# --- 2. the tarball ---
mkdir -p "$W/tgz" "$W/prefix"
step 10-untar 0 tar -C "$W/tgz" -xzf "$TGZ"
step 11-install-sh 0 "$W"/tgz/cudnnctl-*/install.sh --prefix "$W/prefix"
step 12-tgz-version 0 "$W/prefix/bin/cudnnctl" --version
step 13-tgz-unit-paths 0 grep -r "ExecStart" "$W/prefix/lib/systemd/system"
step 14-install-sh-bad 2 "$W"/tgz/cudnnctl-*/install.sh --prefix relative/dir

# --- 3. real cuDNN through the installed cudnnctl, in a throwaway root ---
M=$W/mirror
PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1)
step 20-repack-apt914 0 python3 "$R/scripts/gpu/repack.py" --lib-dir /usr/lib/x86_64-linux-gnu \
  --include-dir /usr/include/x86_64-linux-gnu --mirror "$M/apt" --build 90 --cuda 13 --print
step 21-repack-pip919 0 python3 "$R/scripts/gpu/repack.py" --lib-dir "$PIP/lib" --include-dir "$PIP/include" \
  --mirror "$M/pip" --build 90 --cuda 13 --print
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$M" && exec python3 -m http.server --bind 127.0.0.1 "$PORT") >"$W/http.log" 2>&1 &
HTTP=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
URL=http://127.0.0.1:$PORT
cycle() { # PREFIX CUDNNCTL ROOT
  local p=$1 c=$2 root=$3
  mkdir -p "$root/etc/ld.so.conf.d"
  echo 'include /etc/ld.so.conf.d/*.conf' >"$root/etc/ld.so.conf"
  step "$p-1-install-914-smoke" 0 "$c" --root "$root" --json --cuda 13 --mirror "$URL/apt/" install 9.14.0.90 --require-gpu
  step "$p-2-install-919-smoke" 0 "$c" --root "$root" --json --cuda 13 --mirror "$URL/pip/" install 9.19.0.90 --require-gpu
  step "$p-3-rollback" 0 "$c" --root "$root" --json rollback
  step "$p-4-status" 0 "$c" --root "$root" --json status
  step "$p-5-check" 0 "$c" --root "$root" check
  step "$p-6-verify-smoke" 0 "$c" --root "$root" verify --smoke
  step "$p-7-history" 0 "$c" --root "$root" history
}
cycle 30-deb /usr/bin/cudnnctl "$W/root-deb"
cycle 40-tgz "$W/prefix/bin/cudnnctl" "$W/root-tgz"
kill "$HTTP" 2>/dev/null

# --- 4. leave the machine as found ---
if [ "$was_installed" = 0 ]; then
  step 90-dpkg-purge 0 dpkg --purge cudnnctl
  step 91-gone 1 dpkg -s cudnnctl
  step 92-no-binary 2 ls /usr/bin/cudnnctl
fi
step 93-uninstall-sh 0 "$W"/tgz/cudnnctl-*/install.sh --prefix "$W/prefix" --uninstall
rm -rf "$W"
set +x
{
  echo "== summary ($((SECONDS - T0)) s)"
  printf '%s\n' "${SUMMARY[@]}"
} | tee "$O/summary.txt"
