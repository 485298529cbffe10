# SPDX-License-Identifier: Apache-2.0
# The portable release (scripts/release, docs/ARCHITECTURE.md "Portable release"): the symbol and
# ldd rule on its executables (and that the rule catches the developer build), the .deb that
# depends on libc6 (>= 2.31) alone, the .rpm that requires glibc alone and whose payload runs,
# the tarball under 15 MiB whose install.sh places a working cudnnctl anywhere, lintian.
# The release is built once per build tree: $CUDNNCTL_BUILD_DIR/release (its cache) and
# $CUDNNCTL_BUILD_DIR/dist (the artifacts, reused by the distros suite).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
[ -n "${CUDNNCTL_BUILD_DIR:-}" ] || skip "CUDNNCTL_BUILD_DIR is not set"
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap of the Debian 11 build root)"
command -v debootstrap >/dev/null || skip "debootstrap is not installed"
REPO=$(cd "$E2E_DIR/../.." && pwd)
DIST=$CUDNNCTL_BUILD_DIR/dist
VERSION=$(sed -n 's/^project(cudnnctl VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")

TEST "scripts/release makes the tarball, the .deb and the .rpm, each with its sha256"
expect_exit 0 env CUDNNCTL_RELEASE_DIR="$CUDNNCTL_BUILD_DIR/release" bash "$REPO/scripts/release" --out "$DIST"
TGZ=$DIST/cudnnctl-$VERSION-linux-x86_64.tar.gz
DEB=$DIST/cudnnctl_${VERSION}-1_amd64.deb
RPM=$DIST/cudnnctl-${VERSION}-1.x86_64.rpm
for f in "$TGZ" "$DEB" "$RPM"; do
  expect_file "$f"
  expect_exit 0 bash -c "cd '$DIST' && sha256sum -c '$(basename "$f").sha256'"
done
size=$(stat -c %s "$TGZ")
[ "$size" -lt $((15 * 1024 * 1024)) ] || fail "the tarball is $size bytes, over the 15 MiB budget"
expect_exit 2 bash "$REPO/scripts/release" --bogus
expect_contains "$ERR" "unknown argument '--bogus'"

TEST "without the network, scripts/release builds again from the indexes it checked before"
# An unreachable mirror: the Debian indexes fetched and verified by the run above give the same
# cache keys, so the cached build root and static libraries serve, and nothing is fetched.
OFF=$E2E_TMP/dist-offline
mkdir -p "$OFF"
expect_exit 0 env CUDNNCTL_RELEASE_DIR="$CUDNNCTL_BUILD_DIR/release" \
  RELEASE_DEBIAN_MIRROR=http://127.0.0.1:9 bash "$REPO/scripts/release" --out "$OFF"
expect_contains "$ERR" "trixie/InRelease cannot be fetched: using the trixie amd64 index fetched"
expect_exit 0 bash -c "cd '$OFF' && sha256sum -c 'cudnnctl_${VERSION}-1_amd64.deb.sha256'"
# No index fetched before: it fails, naming what it lacks. A fetched InRelease whose signature
# does not verify is refused: the cached index never stands in for a bad one.
source "$REPO/scripts/lib/debian-root.bash"
expect_exit 1 debian_index http://127.0.0.1:9 trixie amd64 "$E2E_TMP/no-index"
expect_contains "$ERR" "no trixie amd64 index was fetched before"
mkdir -p "$E2E_TMP/forged/dists/trixie" "$E2E_TMP/forged-index"
echo "not a signed Release" >"$E2E_TMP/forged/dists/trixie/InRelease"
cp "$CUDNNCTL_BUILD_DIR"/release/index/Packages-trixie-amd64-* "$E2E_TMP/forged-index/"
start_nginx "$E2E_TMP/forged"
expect_exit 1 debian_index "$MIRROR_URL" trixie amd64 "$E2E_TMP/forged-index"
expect_contains "$ERR" "trixie/InRelease: bad signature"
expect_eq "$(cat "$OUT")" "" "the index path printed for a forged InRelease"
stop_nginx

TEST "the executables ask glibc <= 2.31 for everything and nothing else (check-portable)"
X=$E2E_TMP/deb
dpkg-deb -x "$DEB" "$X"
expect_exit 0 bash "$REPO/scripts/check-portable" "$X/usr/bin/cudnnctl" \
  "$X/usr/libexec/cudnnctl/cudnnctl-smoke" "$X/usr/libexec/cudnnctl/cudnnctl-bench"
expect_exit 0 objdump -T "$X/usr/bin/cudnnctl"
expect_not_contains "$OUT" "GLIBCXX_"
expect_not_contains "$OUT" "GLIBC_2.34"
expect_exit 0 ldd "$X/usr/bin/cudnnctl"
expect_not_contains "$OUT" "libcurl"
expect_not_contains "$OUT" "libarchive"
# The rule can fail: the developer build (Debian 12's shared libraries, glibc 2.34+) breaks it.
expect_exit 1 bash "$REPO/scripts/check-portable" "$CUDNNCTL"
expect_contains "$ERR" "which is not glibc"
expect_contains "$ERR" "newer than glibc 2.31"

TEST ".deb: Depends is libc6 (>= 2.31) alone; lintian clean but for the explained overrides"
expect_exit 0 dpkg-deb -f "$DEB" Depends
expect_eq "$(cat "$OUT")" "libc6 (>= 2.31)" "Depends"
expect_exit 0 dpkg-deb -f "$DEB" Package Version Architecture
expect_contains "$OUT" "Version: $VERSION-1"
expect_contains "$OUT" "Architecture: amd64"
expect_exit 0 "$X/usr/bin/cudnnctl" --version
expect_contains "$OUT" "$VERSION"
# liblzma is Debian 13's liblzma-dev .a (scripts/lib/release-x86_64.bash), not Debian 12's 5.4:
# its LZMA decoder is the floor of every install from NVIDIA's .tar.xz.
expect_exit 0 "$X/usr/bin/cudnnctl" --version --json
expect_json '[int(x) for x in d["libraries"]["liblzma"].split(".")[:2]] >= [5, 8]' true
expect_contains "$X/lib/systemd/system/cudnnctl-verify.service" "ExecStart=/usr/bin/cudnnctl verify --smoke"
if command -v lintian >/dev/null; then
  expect_exit 0 lintian --fail-on error,warning --display-level '>=warning' "$DEB"
  if grep -E '^(E|W): ' "$OUT"; then fail "lintian: $(grep -E '^(E|W): ' "$OUT")"; fi
fi

TEST ".rpm: Requires glibc alone, units in /usr/lib/systemd/system, the payload runs (rpm2cpio | cpio)"
expect_exit 0 rpm -qp --requires "$RPM"
grep -v '^rpmlib(' "$OUT" >"$E2E_TMP/requires"
expect_eq "$(cat "$E2E_TMP/requires")" "glibc >= 2.31" "Requires"
expect_exit 0 rpm -qpl "$RPM"
expect_contains "$OUT" "/usr/bin/cudnnctl"
expect_contains "$OUT" "/usr/lib/systemd/system/cudnnctl-verify.service"
expect_contains "$OUT" "/usr/libexec/cudnnctl/cudnnctl-smoke"
# No directory of the distribution's (filesystem, systemd, man-db) is claimed.
for d in /usr/lib/systemd/system /usr/libexec /usr/share/man/man1 /usr/bin; do
  if grep -qxF "$d" "$OUT"; then fail "the .rpm owns $d"; fi
done
P=$E2E_TMP/rpm
mkdir -p "$P"
expect_exit 0 bash -c "cd '$P' && rpm2cpio '$RPM' | cpio -idm --quiet"
expect_exit 0 "$P/usr/bin/cudnnctl" --version
expect_contains "$OUT" "$VERSION"

TEST "tarball: install.sh places a cudnnctl that runs, with units naming the prefix; --uninstall"
T=$E2E_TMP/tgz
mkdir -p "$T"
tar -C "$T" -xzf "$TGZ"
I=$T/cudnnctl-$VERSION-linux-x86_64/install.sh
expect_exit 0 "$I" --prefix "$E2E_TMP/prefix"
expect_exit 0 "$E2E_TMP/prefix/bin/cudnnctl" --version
expect_file "$E2E_TMP/prefix/libexec/cudnnctl/cudnnctl-smoke"
expect_file "$E2E_TMP/prefix/share/man/man1/cudnnctl.1.gz"
expect_file "$E2E_TMP/prefix/share/cudnnctl/ansible/playbook.yml"
expect_contains "$E2E_TMP/prefix/lib/systemd/system/cudnnctl-verify.service" "ExecStart=$E2E_TMP/prefix/bin/cudnnctl verify --smoke"
# The installed layout finds its smoke helper: an install through it is gated (skipped: no GPU).
expect_installed_gated "$E2E_TMP/prefix/bin/cudnnctl"
expect_exit 2 "$I" --prefix relative/dir
expect_contains "$ERR" "--prefix must be an absolute path"
expect_exit 0 "$I" --prefix "$E2E_TMP/prefix" --uninstall
expect_no_file "$E2E_TMP/prefix/bin/cudnnctl"
expect_no_file "$E2E_TMP/prefix/lib/systemd/system/cudnnctl-verify.service"
