# SPDX-License-Identifier: Apache-2.0
# The portable release on Debian 11, 12 and 13 (issue 33): for each, a debootstrap'ed root
# (tests/distros/mkroot.sh, cached) on an overlay, with nothing of cudnnctl's old dependencies:
# dpkg -i of the .deb offline, install -> install -> rollback -> check against a loopback
# (file://) mirror, then a cold boot under the container's own systemd that runs
# cudnnctl-verify.service (one container at a time; the container powers itself off once the
# unit has finished, so the host waits for nspawn to exit, not on a reboot). The tarball's
# install.sh inside Debian 13; the .rpm's payload (rpm2cpio | cpio) on Debian 11.
# The artifacts come from $CUDNNCTL_BUILD_DIR/dist (the release suite), made here if missing.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
[ -n "${CUDNNCTL_BUILD_DIR:-}" ] || skip "CUDNNCTL_BUILD_DIR is not set"
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, systemd-nspawn, overlay mounts)"
for t in debootstrap systemd-nspawn rpm2cpio cpio; do
  command -v "$t" >/dev/null || skip "$t is not installed (scripts/install-deps)"
done
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || skip "no overlay filesystem"
REPO=$(cd "$E2E_DIR/../.." && pwd)
DIST=$CUDNNCTL_BUILD_DIR/dist
VERSION=$(sed -n 's/^project(cudnnctl VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
DEB=$DIST/cudnnctl_${VERSION}-1_amd64.deb
TGZ=$DIST/cudnnctl-$VERSION-linux-x86_64.tar.gz
RPM=$DIST/cudnnctl-${VERSION}-1.x86_64.rpm
BOOT_TIMEOUT=${DISTROS_BOOT_TIMEOUT:-420}
CACHE=${DISTROS_CACHE:-$CUDNNCTL_BUILD_DIR/distros-cache}

# Unmount every overlay of this suite (also on failure).
distros_cleanup() {
  local p
  for p in "$E2E_TMP"/nspawn-*.pid; do
    [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
  done
  awk -v t="$E2E_TMP/" 'index($2, t) == 1 { print $2 }' /proc/self/mounts | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
}
trap distros_cleanup EXIT

TEST "the release's artifacts are there (scripts/release, cached)"
if [ ! -f "$DEB" ] || [ ! -f "$TGZ" ] || [ ! -f "$RPM" ]; then
  expect_exit 0 env CUDNNCTL_RELEASE_DIR="$CUDNNCTL_BUILD_DIR/release" bash "$REPO/scripts/release" --out "$DIST"
fi
expect_file "$DEB"
# The mirror's stand-in libraries are compiled against the release's Debian 11 build root
# (glibc 2.31): compiled on this Debian 12 machine they need GLIBC_2.34, and install's runtime
# gate rightly refuses them in the bullseye container ("cannot be loaded").
SYSROOT=
for d in "$CUDNNCTL_BUILD_DIR"/release/sysroot-*; do
  [ -f "$d/.complete" ] && SYSROOT=$d
done
[ -n "$SYSROOT" ] || fail "no Debian 11 build root under $CUDNNCTL_BUILD_DIR/release (scripts/release makes it)"
SL=$SYSROOT/usr/lib/x86_64-linux-gnu
printf '#!/bin/sh\nexec gcc --sysroot=%s -B%s/ -L%s "$@"\n' "$SYSROOT" "$SL" "$SL" >"$E2E_TMP/cc-glibc231"
chmod +x "$E2E_TMP/cc-glibc231"
M=$(CC=$E2E_TMP/cc-glibc231 std_mirror)

# host SUITE: a fresh overlay over the cached root of SUITE; sets H (its root as the host sees it).
host() {
  local base d=$E2E_TMP/host-$1
  base=$(bash "$REPO/tests/distros/mkroot.sh" "$CACHE" "$1") || fail "debootstrap of $1 failed"
  mkdir -p "$d/upper" "$d/work" "$d/root"
  mount -t overlay overlay -o "lowerdir=$base,upperdir=$d/upper,workdir=$d/work" "$d/root" || fail "$1: overlay mount failed"
  H=$d/root
  python3 -c 'import uuid; print(uuid.uuid4().hex)' >"$H/etc/machine-id"
  mkdir -p "$H/mirror" "$H/dist"
}
# inside SUITE CMD...: CMD in the container, not booted, no network; the mirror and dist/ read-only.
inside() {
  local s=$1
  shift
  run systemd-nspawn -q -D "$E2E_TMP/host-$s/root" --register=no --keep-unit --private-network --pipe \
    --resolv-conf=off --timezone=off --bind-ro="$M:/mirror" --bind-ro="$DIST:/dist" "$@" </dev/null
}
in_ok() { inside "$@"; [ "$RC" -eq 0 ] || fail "in $1: '${*:2}' exited $RC: $(cat "$ERR") $(cat "$OUT")"; }

# boot SUITE: a cold boot; waits (up to BOOT_TIMEOUT) for the container to power itself off
# after cudnnctl-verify.service finished. On a timeout: the container's journal, then fail.
boot() {
  local s=$1 r=$E2E_TMP/host-$1/root pid rc=0 end
  rm -f "$r/var/tmp/verify-state"
  systemd-nspawn -q -D "$r" --boot --register=no --keep-unit --private-network --console=passive \
    --link-journal=no --resolv-conf=off --timezone=off --machine="distros-$s" --bind-ro="$M:/mirror" \
    </dev/null >"$E2E_TMP/console-$s.log" 2>&1 &
  pid=$!
  echo "$pid" >"$E2E_TMP/nspawn-$s.pid"
  end=$((SECONDS + BOOT_TIMEOUT))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    sleep 5
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null || true # killed: 137, which must not end the suite before the journal
    rm -f "$E2E_TMP/nspawn-$s.pid"
    _e2e_say "$s: console:"
    tail -40 "$E2E_TMP/console-$s.log" >&"$_E2E_ERRFD" || true
    _e2e_say "$s: journal:"
    journalctl -D "$r/var/log/journal" --no-pager -n 80 >&"$_E2E_ERRFD" 2>&1 || true
    fail "$s did not finish its boot (cudnnctl-verify, then poweroff) within ${BOOT_TIMEOUT}s"
  fi
  wait "$pid" || rc=$?
  rm -f "$E2E_TMP/nspawn-$s.pid"
  [ -f "$r/var/tmp/verify-state" ] || {
    journalctl -D "$r/var/log/journal" --no-pager -n 80 >&"$_E2E_ERRFD" 2>&1 || true
    fail "$s: the boot left no verify state (nspawn exit $rc)"
  }
}

# The probe unit: records the verify unit's state after it finished, then powers off.
done_unit() {
  cat >"$1/etc/systemd/system/distros-done.service" <<'EOU'
[Unit]
Description=distros suite: record cudnnctl-verify's result, then power off
After=cudnnctl-verify.service multi-user.target
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'systemctl show -p ActiveState,SubState,Result cudnnctl-verify.service >/var/tmp/verify-state.tmp; journalctl -b -o cat --no-pager -u cudnnctl-verify.service >/var/tmp/verify-journal; mv /var/tmp/verify-state.tmp /var/tmp/verify-state; systemctl --no-block poweroff'
[Install]
WantedBy=multi-user.target
EOU
}

for s in bullseye bookworm trixie; do
  TEST "$s: dpkg -i of the .deb offline; install, install, rollback, check against the mirror"
  host "$s"
  in_ok "$s" dpkg -i "/dist/$(basename "$DEB")"
  in_ok "$s" dpkg-query -W -f '${Status} ${Version}' cudnnctl
  expect_eq "$(cat "$OUT")" "install ok installed $VERSION-1" "dpkg status on $s"
  in_ok "$s" cudnnctl --version
  expect_contains "$OUT" "$VERSION"
  in_ok "$s" cudnnctl --mirror file:///mirror --cuda 12 install 9.1.0
  in_ok "$s" cudnnctl --mirror file:///mirror --cuda 12 install 8.9.7
  in_ok "$s" cudnnctl check --expect 8.9.7
  in_ok "$s" cudnnctl rollback
  in_ok "$s" cudnnctl check --expect 9.1.0
  expect_contains "$OUT" "ok: cuDNN 9.1.0"
  inside "$s" cudnnctl check --expect 8.9.7
  expect_eq "$RC" 8 "check --expect of the rolled-back version on $s"

  TEST "$s: a cold boot under its own systemd runs cudnnctl-verify.service: it passes"
  done_unit "$H"
  in_ok "$s" systemctl enable cudnnctl-verify.service distros-done.service
  t0=$SECONDS
  boot "$s"
  _e2e_say "    ($s booted, verified and powered off in $((SECONDS - t0)) s)"
  expect_contains "$H/var/tmp/verify-state" "ActiveState=active"
  expect_contains "$H/var/tmp/verify-state" "Result=success"
  expect_contains "$H/var/tmp/verify-journal" "9.1.0"
done

TEST "trixie: the tarball's install.sh places a cudnnctl that installs from the mirror"
in_ok trixie sh -c "mkdir -p /tmp/t && tar -C /tmp/t -xzf /dist/$(basename "$TGZ") && /tmp/t/cudnnctl-$VERSION-linux-x86_64/install.sh"
expect_contains "$OUT" "installed cudnnctl"
# (A throwaway root in /var/tmp: each command is a container of its own, with a fresh /tmp.)
in_ok trixie sh -c "mkdir -p /var/tmp/r/etc && echo 'include /etc/ld.so.conf.d/*.conf' >/var/tmp/r/etc/ld.so.conf && /usr/local/bin/cudnnctl --root /var/tmp/r --mirror file:///mirror --cuda 12 install 9.27.0"
in_ok trixie /usr/local/bin/cudnnctl --root /var/tmp/r check --expect 9.27.0
expect_contains "$H/usr/local/lib/systemd/system/cudnnctl-verify.service" "ExecStart=/usr/local/bin/cudnnctl verify --smoke"

TEST "bullseye: the .rpm's payload (rpm2cpio | cpio) runs on Debian 11"
P=$E2E_TMP/host-bullseye/root/opt/rpm-payload
mkdir -p "$P"
expect_exit 0 bash -c "cd '$P' && rpm2cpio '$RPM' | cpio -idm --quiet"
in_ok bullseye sh -c "mkdir -p /var/tmp/r/etc && echo 'include /etc/ld.so.conf.d/*.conf' >/var/tmp/r/etc/ld.so.conf && /opt/rpm-payload/usr/bin/cudnnctl --root /var/tmp/r --mirror file:///mirror --cuda 12 install 9.1.0"
in_ok bullseye /opt/rpm-payload/usr/bin/cudnnctl --root /var/tmp/r --json status
expect_contains "$OUT" "9.1.0"
