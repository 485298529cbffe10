# SPDX-License-Identifier: Apache-2.0
# The Debian package built with CPack (cmake/Packaging.cmake, docs/FLEET.md "The Debian
# package"): its files and their places, dependencies from Debian (dpkg-shlibdeps), the
# maintainer scripts, lintian clean except for the explained overrides, and an install into
# a scratch dpkg root that runs. The fleet suite installs the same package on booted hosts.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
[ -n "${CUDNNCTL_BUILD_DIR:-}" ] || skip "CUDNNCTL_BUILD_DIR is not set (the build to package)"
command -v cpack >/dev/null || skip "cpack is not installed"
REPO=$(cd "$E2E_DIR/../.." && pwd)

TEST "cpack -G DEB builds cudnnctl_<version>-1_<arch>.deb"
PKG=$E2E_TMP/pkg
expect_exit 0 cpack -G DEB --config "$CUDNNCTL_BUILD_DIR/CPackConfig.cmake" -B "$PKG"
DEB=$(ls "$PKG"/cudnnctl_*.deb)
expect_eq "$(basename "$DEB")" "cudnnctl_0.1.0-1_$(dpkg --print-architecture).deb" "file name"

TEST "contents: the program, the helper, the units in /lib/systemd/system, the docs, the man page, the completions"
expect_exit 0 dpkg-deb -c "$DEB"
awk '{print $1, $6}' "$OUT" | sort -k2 >"$E2E_TMP/contents"
for p in "-rwxr-xr-x ./usr/bin/cudnnctl" \
  "-rwxr-xr-x ./usr/libexec/cudnnctl/cudnnctl-smoke" \
  "-rwxr-xr-x ./usr/libexec/cudnnctl/rollback-on-failure" \
  "-rw-r--r-- ./lib/systemd/system/cudnnctl-verify.service" \
  "-rw-r--r-- ./lib/systemd/system/cudnnctl-rollback.service" \
  "-rw-r--r-- ./lib/systemd/system/cudnnctl-doctor.service" \
  "-rw-r--r-- ./lib/systemd/system/cudnnctl-doctor.timer" \
  "-rw-r--r-- ./usr/share/cudnnctl/default.example" \
  "-rw-r--r-- ./usr/share/doc/cudnnctl/copyright" \
  "-rw-r--r-- ./usr/share/doc/cudnnctl/changelog.Debian.gz" \
  "-rw-r--r-- ./usr/share/lintian/overrides/cudnnctl" \
  "-rw-r--r-- ./usr/share/man/man1/cudnnctl.1.gz" \
  "-rw-r--r-- ./usr/share/bash-completion/completions/cudnnctl" \
  "-rw-r--r-- ./usr/share/zsh/vendor-completions/_cudnnctl" \
  "-rw-r--r-- ./usr/share/fish/vendor_completions.d/cudnnctl.fish"; do
  grep -qxF -- "$p" "$E2E_TMP/contents" || fail "the package lacks '$p': $(cat "$E2E_TMP/contents")"
done
if grep -q ' ./usr/lib/systemd' "$E2E_TMP/contents"; then fail "units under /usr/lib/systemd"; fi
if grep -q ' ./usr/bin/cudnnctl-smoke' "$E2E_TMP/contents"; then fail "the helper is a command in /usr/bin"; fi
dpkg-deb -x "$DEB" "$E2E_TMP/x"
expect_contains "$E2E_TMP/x/lib/systemd/system/cudnnctl-verify.service" "ExecStart=/usr/bin/cudnnctl verify --smoke"
expect_exit 0 file "$E2E_TMP/x/usr/bin/cudnnctl"
expect_contains "$OUT" "stripped"
expect_not_contains "$OUT" "not stripped"
# The units as packaged pass the offline checks too.
expect_exit 0 python3 "$REPO/tests/systemd/check_units.py" "$E2E_TMP/x/lib/systemd/system"

TEST "control: Depends from dpkg-shlibdeps (Debian's libraries), maintainer scripts"
expect_exit 0 dpkg-deb -f "$DEB" Depends
for d in libc6 libcurl4 libarchive13 libssl3 libstdc++6; do
  sed 's/, /\n/g' "$OUT" | cut -d' ' -f1 | grep -qxF "$d" || fail "Depends lacks $d: $(cat "$OUT")"
done
expect_exit 0 dpkg-deb -f "$DEB" Package Version Architecture Maintainer Section Priority Description
expect_contains "$OUT" "Version: 0.1.0-1"
expect_contains "$OUT" "Section: admin"
dpkg-deb -e "$DEB" "$E2E_TMP/control"
for s in postinst postrm; do
  [ -x "$E2E_TMP/control/$s" ] || fail "no executable $s"
  expect_contains "$E2E_TMP/control/$s" "systemctl --system daemon-reload"
done
expect_file "$E2E_TMP/control/md5sums"

TEST "lintian: clean but for the overrides, each with its reason"
if command -v lintian >/dev/null; then
  # (With --show-overrides lintian 2.116 exits 2 even when only overridden tags remain.)
  expect_exit 0 lintian --fail-on error,warning --display-level '>=warning' "$DEB"
  if grep -E '^(E|W): ' "$OUT"; then fail "lintian: $(grep -E '^(E|W): ' "$OUT")"; fi
  run lintian --display-level '>=warning' --show-overrides "$DEB"
  grep '^O: ' "$OUT" | sed 's/^O: //' | sort >"$E2E_TMP/overridden"
  grep -v '^#' "$REPO/packaging/deb/lintian-overrides" | grep . | sort >"$E2E_TMP/overrides"
  cmp "$E2E_TMP/overridden" "$E2E_TMP/overrides" ||
    fail "overrides that lintian no longer needs, or tags overridden unexpectedly: $(diff "$E2E_TMP/overrides" "$E2E_TMP/overridden")"
  # Every override in the package is preceded by a comment that gives the reason.
  expect_exit 0 python3 - "$REPO/packaging/deb/lintian-overrides" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
bad = [l for i, l in enumerate(lines) if l and not l.startswith("#")
       and (i == 0 or not lines[i - 1].startswith("#"))]
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
else
  _e2e_say "    (lintian is not installed: scripts/install-deps installs it; this check did not run)"
  [ -z "${CI:-}" ] || fail "lintian is not installed in CI"
fi

TEST "dpkg installs it into a scratch root; the installed cudnnctl runs and finds its helper"
D=$E2E_TMP/dpkg-root
mkdir -p "$D/var/lib/dpkg/updates" "$D/var/lib/dpkg/info"
: >"$D/var/lib/dpkg/status"
expect_exit 0 dpkg --root="$D" --force-depends --force-not-root --force-script-chrootless \
  --log=/dev/null --unpack "$DEB"
expect_exit 0 "$D/usr/bin/cudnnctl" --version
expect_contains "$OUT" "0.1.0"
# The installed layout: the smoke helper is found in ../libexec/cudnnctl/ (a helper that
# cannot be found fails the install's smoke test, exit 5; no GPU here is "skipped").
expect_installed_gated "$D/usr/bin/cudnnctl"
expect_exit 0 "$D/usr/bin/cudnnctl" --root "$R" check --smoke
