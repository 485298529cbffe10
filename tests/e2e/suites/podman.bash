# SPDX-License-Identifier: Apache-2.0
# The container image case (issue 33): podman builds packaging/podman/Dockerfile from a Debian
# 12 base made with debootstrap and `podman import` (no registry), installing cudnnctl from the
# release tarball and a cuDNN from a loopback mirror with --no-cache; the cuDNN layer is about
# the size of what it unpacks (no archive left in it). Private podman storage under $E2E_TMP
# (vfs driver): nothing of the host's containers is touched.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
[ -n "${CUDNNCTL_BUILD_DIR:-}" ] || skip "CUDNNCTL_BUILD_DIR is not set"
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, podman)"
for t in podman debootstrap; do command -v "$t" >/dev/null || skip "$t is not installed (scripts/install-deps)"; done
REPO=$(cd "$E2E_DIR/../.." && pwd)
DIST=$CUDNNCTL_BUILD_DIR/dist
VERSION=$(sed -n 's/^project(cudnnctl VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
TGZ=$DIST/cudnnctl-$VERSION-linux-x86_64.tar.gz
# podman refuses a --runroot longer than 50 characters: it lives in a short directory of its own.
RUNROOT=$(mktemp -d "${PODMAN_RUNROOT_DIR:-/tmp}/podrun.XXXXXX")
P=(podman --root "$E2E_TMP/podman/storage" --runroot "$RUNROOT" --storage-driver vfs
  --cgroup-manager cgroupfs --events-backend none)
HTTP_PID=""
podman_cleanup() {
  [ -z "$HTTP_PID" ] || kill "$HTTP_PID" 2>/dev/null
  "${P[@]}" system reset --force >/dev/null 2>&1 || true
  rm -rf "$E2E_TMP/podman" "$RUNROOT" 2>/dev/null || true
}
trap podman_cleanup EXIT

# in_image CMD: CMD's output in the test image, lines prefixed "out: " in $OUT (a RUN step of a
# build FROM the image, chroot isolation, which allows only the host network: CMD uses none).
in_image() {
  local c=$E2E_TMP/probe
  rm -rf "$c"
  mkdir -p "$c"
  printf 'FROM localhost/cudnnctl-e2e:test\nRUN sh -c %q 2>&1 | sed "s/^/out: /"\n' "$1" >"$c/Containerfile"
  expect_exit 0 "${P[@]}" build --isolation chroot --network host --pull=never --layers=false -f "$c/Containerfile" "$c"
  grep '^out: ' "$OUT" | sed 's/^out: //' >"$E2E_TMP/in_image.out"
  cp "$E2E_TMP/in_image.out" "$OUT"
}

TEST "the release tarball is there (scripts/release, cached)"
if [ ! -f "$TGZ" ]; then
  expect_exit 0 env CUDNNCTL_RELEASE_DIR="$CUDNNCTL_BUILD_DIR/release" bash "$REPO/scripts/release" --out "$DIST"
fi
expect_file "$TGZ"

TEST "a Debian 12 base from debootstrap, imported (podman import, no registry)"
BASE=$(bash "$REPO/tests/distros/mkroot.sh" "${DISTROS_CACHE:-$CUDNNCTL_BUILD_DIR/distros-cache}" bookworm) ||
  fail "debootstrap of bookworm failed"
expect_exit 0 bash -c "tar -C '$BASE' --exclude=./.distros-root-complete -c . | $(printf '%q ' "${P[@]}") import - localhost/cudnnctl-e2e-base:bookworm"
expect_exit 0 "${P[@]}" image exists localhost/cudnnctl-e2e-base:bookworm

TEST "podman build: cudnnctl from the tarball, cuDNN from the loopback mirror with --no-cache"
M=$(std_mirror)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$M" && exec python3 -m http.server --bind 127.0.0.1 "$PORT") >"$E2E_TMP/http.log" 2>&1 &
HTTP_PID=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
C=$E2E_TMP/context
mkdir -p "$C"
cp "$TGZ" "$C/"
# --isolation chroot and --cgroups=disabled: no cgroup is made for the build's or the runs'
# containers (crun refuses this machine's hybrid cgroup hierarchy, "cgroups in hybrid mode not
# supported"; what is tested is the image, not podman's resource control). What is in the image
# is looked at through RUN steps of a build FROM it (in_image), not `podman run`: crun sets the
# container's rlimits, which this machine's root (no CAP_SYS_RESOURCE) may not.
expect_exit 0 "${P[@]}" build --isolation chroot --network host --pull=never -f "$REPO/packaging/podman/Dockerfile" \
  --build-arg BASE=localhost/cudnnctl-e2e-base:bookworm --build-arg VERSION="$VERSION" \
  --build-arg MIRROR="http://127.0.0.1:$PORT/" -t localhost/cudnnctl-e2e:test "$C"
in_image 'cudnnctl check --expect 9.1.0; echo "exit $?"'
expect_contains "$OUT" "exit 0"
expect_contains "$OUT" "ok: cuDNN 9.1.0"
# Nothing of the download stayed in the image.
in_image 'find /var/cache/cudnnctl -type f 2>/dev/null | wc -l'
expect_eq "$(tr -d ' \n' <"$OUT")" 0 "files in /var/cache/cudnnctl"

TEST "the cuDNN layer is the size of what it unpacked (the archive is not in it)"
expect_exit 0 "${P[@]}" history --no-trunc --human=false --format '{{.Size}}|{{.CreatedBy}}' localhost/cudnnctl-e2e:test
layer=$(grep -F 'install "${CUDNN}"' "$OUT" | head -1 | cut -d'|' -f1)
[ -n "$layer" ] || layer=$(grep -F 'install' "$OUT" | grep -F -- '--no-cache' | head -1 | cut -d'|' -f1)
[ -n "$layer" ] || fail "no layer of the cuDNN install in the history: $(cat "$OUT")"
# Some podman versions print the size as "200 kB" even with --human=false (SI units).
layer=$(python3 -c 'import re, sys
m = re.fullmatch(r"\s*([0-9.]+)\s*([kMG]?B)?\s*", sys.argv[1]) or sys.exit("not a size: " + sys.argv[1])
print(int(float(m[1]) * {None: 1, "B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[m[2]]))' "$layer") ||
  fail "podman history gave a layer size that is not a size: $layer"
in_image 'du -sb --apparent-size /opt/cudnn/store | cut -f1'
unpacked=$(tr -d ' \n' <"$OUT")
archive=$(find "$M/cudnn/linux-x86_64" -name 'cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz' -printf '%s\n' | head -1)
_e2e_say "    (cuDNN layer: $layer bytes; unpacked store entry: $unpacked bytes; archive: ${archive:-?} bytes)"
echo "layer=$layer unpacked=$unpacked archive=${archive:-}" >"$CUDNNCTL_BUILD_DIR/podman-layer-size.txt"
# The layer holds the unpacked files plus the state and journal (a few KiB), never the archive.
[ "$layer" -le $((unpacked + unpacked / 10 + 1048576)) ] ||
  fail "the cuDNN layer ($layer bytes) is more than the unpacked entry ($unpacked bytes) + 10 % + 1 MiB"
