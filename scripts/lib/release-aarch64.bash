# SPDX-License-Identifier: Apache-2.0
# scripts/release --arch aarch64: steps 1 and 2 cross-compiled for ARM64 servers (linux-sbsa);
# sourced by scripts/release, which then builds cudnnctl with the compilers set here and packs
# it. Its cache is $CUDNNCTL_RELEASE_DIR/aarch64. The recipe is x86-64's
# (scripts/lib/release-x86_64.bash, docs/ARCHITECTURE.md "Portable release") with:
# - the cross toolchain (Debian 12's gcc-12/g++-12-aarch64-linux-gnu, binutils-aarch64-linux-gnu)
#   and qemu-user-static: their .debs from the mirror's bookworm amd64 index, unpacked into the
#   cache (not installed: the build machine's apt state stays as it is);
# - the build root: debootstrap --foreign --arch=arm64 of bullseye (glibc 2.31); its first stage
#   unpacks the required packages and libc6-dev, linux-libc-dev and libcrypt-dev are unpacked
#   from its downloads. No second stage: that runs arm64's dpkg in a chroot, and the build only
#   reads the root;
# - OpenSSL/zstd/zlib/libelf: the .a files and headers of Debian 12's arm64 -dev packages, from
#   the mirror's bookworm arm64 index (each .deb checked against the index, the index against the
#   signed InRelease); liblzma Debian 13's (xz-utils 5.8), from its trixie arm64 index, as x86-64;
# - libcurl/libarchive: the same source packages and options as x86-64, configure --host.
# scripts/release's variables (repo, cache, mirror, jobs, log) are used here and cc, cxx,
# cross_cmake, sysroot, deps set for it:
# shellcheck disable=SC2034,SC2154

tools_debs=(binutils-aarch64-linux-gnu cpp-12-aarch64-linux-gnu gcc-12-aarch64-linux-gnu
  g++-12-aarch64-linux-gnu libgcc-12-dev-arm64-cross libstdc++-12-dev-arm64-cross qemu-user-static)
arm64_libs=(libssl-dev libzstd-dev zlib1g-dev libelf-dev)
amd64_index=$(debian_index "$mirror" bookworm amd64 "$cache/index") || exit 1
arm64_index=$(debian_index "$mirror" bookworm arm64 "$cache/index") || exit 1
# liblzma from Debian 13 (xz-utils 5.8), as on x86-64 (scripts/lib/release-x86_64.bash).
trixie_arm64_index=$(debian_index "$mirror" trixie arm64 "$cache/index") || exit 1

# --- 0. The cross toolchain and qemu-aarch64-static ---
tools=$cache/tools-$( (debian_versions "$amd64_index" "${tools_debs[@]}" || echo failed) | sha256sum | cut -c1-12)
if [ ! -f "$tools/.complete" ]; then
  log "cross toolchain and qemu-user-static into $tools (once)"
  rm -rf "$tools"
  debian_fetch "$mirror" "$amd64_index" "$tools/debs" "${tools_debs[@]}" || exit 1
  for deb in "$tools"/debs/*.deb; do
    case $deb in
    */qemu-user-static_*) dpkg-deb --fsys-tarfile "$deb" | tar -C "$tools" -xf - ./usr/bin/qemu-aarch64-static ;;
    *) dpkg-deb -x "$deb" "$tools" ;;
    esac
  done
  rm -rf "$tools/debs"
  : >"$tools/.complete"
fi
# The cross binutils load their private libraries (libbfd-2.40-arm64.so, ...) from the system's
# library directory; unpacked here, they are found through LD_LIBRARY_PATH (no other library
# has those names). configure --host looks for aarch64-linux-gnu-gcc, ar, ranlib, strip on PATH.
export PATH=$tools/usr/bin:$PATH
export LD_LIBRARY_PATH=$tools/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
qemu=$tools/usr/bin/qemu-aarch64-static
cc=$tools/usr/bin/aarch64-linux-gnu-gcc-12
cxx=$tools/usr/bin/aarch64-linux-gnu-g++-12

# --- 1. The Debian 11 build root (glibc 2.31, arm64) ---
sysroot_packages=libc6-dev,linux-libc-dev,libcrypt-dev
sysroot=$cache/sysroot-$(echo "bullseye arm64 foreign $sysroot_packages v1" | sha256sum | cut -c1-12)
if [ ! -f "$sysroot/.complete" ]; then
  log "debootstrap --foreign --arch=arm64 bullseye into $sysroot (a minute, once)"
  remove_tree "$sysroot"
  debootstrap_foreign_root "$mirror" bullseye arm64 "$sysroot" "$sysroot_packages" "$cache/debootstrap-sysroot.log" || exit 1
  : >"$sysroot/.complete"
fi
find "$sysroot/usr/lib" -type l -lname '/*' | while read -r l; do
  ln -sfnr "$sysroot$(readlink "$l")" "$l"
done
glibc=$(dpkg-deb -f "$(ls "$sysroot"/var/cache/apt/archives/libc6_*_arm64.deb)" Version)
log "build root: Debian 11 arm64, libc6 $glibc"
# CMake: the target, and the built cudnnctl run under qemu where the build runs it (the
# completions and the man page, cmake/Completion.cmake).
cross_cmake="set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CROSSCOMPILING_EMULATOR $qemu;-L;$sysroot)
"

# --- 2. The static libraries ---
deps_key=$( (
  sed -n '/^# --- aarch64 deps key begin/,/^# --- aarch64 deps key end/p' "${BASH_SOURCE[0]}"
  debian_versions "$arm64_index" "${arm64_libs[@]}" || echo failed
  debian_versions "$trixie_arm64_index" liblzma-dev || echo failed
  dpkg-query -W nlohmann-json3-dev libcli11-dev
  echo "$sysroot $tools"
) | sha256sum | cut -c1-12)
deps=$cache/deps-$deps_key
# --- aarch64 deps key begin
build_deps_aarch64() {
  local d=$1 src=$1/src apt=$1/apt x=$1/arm64
  mkdir -p "$d/include" "$d/lib" "$src" "$apt/lists/partial" "$apt/cache/archives/partial"
  # Debian 12's arm64 .a files and headers, Debian 13's liblzma; the header-only libraries from
  # the build machine.
  debian_fetch "$mirror" "$arm64_index" "$x/debs" "${arm64_libs[@]}" || return 1
  debian_fetch "$mirror" "$trixie_arm64_index" "$x/debs" liblzma-dev || return 1
  local deb
  for deb in "$x"/debs/*.deb; do dpkg-deb -x "$deb" "$x"; done
  local ml=$x/usr/lib/aarch64-linux-gnu inc=$x/usr/include
  cp -a "$inc/openssl" "$inc/zstd.h" "$inc/zstd_errors.h" "$inc/zdict.h" "$inc/lzma.h" "$inc/lzma" \
    "$inc/zlib.h" "$inc/zconf.h" "$inc/libelf.h" "$inc/gelf.h" "$inc/nlist.h" \
    /usr/include/nlohmann /usr/include/CLI "$d/include/"
  cp -a "$inc/aarch64-linux-gnu/openssl/." "$d/include/openssl/"
  cp -a "$ml/libssl.a" "$ml/libcrypto.a" "$ml/libzstd.a" "$ml/liblzma.a" "$ml/libz.a" "$ml/libelf.a" "$d/lib/"
  # libcurl and libarchive: as on x86-64 (scripts/lib/release-x86_64.bash, whose text is that
  # build's cache key and so stays as it is), with the same options.
  echo "deb-src $mirror bookworm main" >"$apt/sources.list"
  local A=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Debug::NoLocking=1 -q)
  apt-get "${A[@]}" update >"$d/apt.log" 2>&1
  (cd "$src" && apt-get "${A[@]}" source --download-only curl libarchive >>"$d/apt.log" 2>&1)
  (cd "$src" && dpkg-source -x curl_*.dsc curl && dpkg-source -x libarchive_*.dsc libarchive) >>"$d/apt.log" 2>&1
  local cc="aarch64-linux-gnu-gcc-12 --sysroot=$sysroot" host=--host=aarch64-linux-gnu
  local notools="ACLOCAL=true AUTOCONF=true AUTOMAKE=true AUTOHEADER=true"
  local flags="-O2 -fPIC -I$d/include"
  # No pkg-config answer from the build machine's x86-64 .pc files.
  local -x PKG_CONFIG_LIBDIR=$d/lib/pkgconfig PKG_CONFIG_PATH=
  log "building libcurl for aarch64 (HTTP, HTTPS, file only)"
  (cd "$src/curl" && CC=$cc CFLAGS="$flags" CPPFLAGS="-I$d/include" LDFLAGS="-L$d/lib" LIBS="-ldl -lpthread" \
    ./configure $host --prefix="$d" --disable-shared --enable-static --with-openssl="$d" --with-zlib="$d" \
    --without-ca-bundle --without-ca-path --without-ca-fallback \
    --disable-ftp --disable-ldap --disable-ldaps --disable-rtsp --disable-dict --disable-telnet \
    --disable-tftp --disable-pop3 --disable-imap --disable-smtp --disable-gopher --disable-mqtt \
    --disable-smb --disable-manual --disable-docs --disable-alt-svc --disable-hsts --disable-ntlm \
    --disable-unix-sockets --without-libpsl --without-brotli --without-zstd --without-nghttp2 \
    --without-nghttp3 --without-ngtcp2 --without-libidn2 --without-librtmp --without-libssh2 \
    --without-libssh --without-gssapi --without-libgsasl --enable-threaded-resolver >"$d/curl.log" 2>&1 &&
    make -j"$jobs" $notools -C lib >>"$d/curl.log" 2>&1 && make $notools -C lib install >>"$d/curl.log" 2>&1 &&
    make $notools -C include install >>"$d/curl.log" 2>&1) || { tail -30 "$d/curl.log" >&2; return 1; }
  log "building libarchive for aarch64 (tar with gzip, xz, zstd only)"
  (cd "$src/libarchive" && CC=$cc CFLAGS="$flags" CPPFLAGS="-I$d/include" LDFLAGS="-L$d/lib" \
    ./configure $host --prefix="$d" --disable-shared --enable-static --disable-bsdtar --disable-bsdcat \
    --disable-bsdcpio --disable-acl --disable-xattr --without-xml2 --without-expat \
    --without-openssl --without-nettle --without-mbedtls --without-lz4 --without-bz2lib \
    --without-lzo2 --without-cng --without-libb2 --without-iconv --with-zstd --with-lzma --with-zlib \
    >"$d/libarchive.log" 2>&1 &&
    make -j"$jobs" $notools libarchive.la >>"$d/libarchive.log" 2>&1 &&
    make $notools install-libLTLIBRARIES install-includeHEADERS >>"$d/libarchive.log" 2>&1) ||
    { tail -30 "$d/libarchive.log" >&2; return 1; }
  rm -rf "$src" "$apt" "$x"
}
# --- aarch64 deps key end
if [ ! -f "$deps/.complete" ]; then
  log "static libraries into $deps (a few minutes, once)"
  remove_tree "$deps"
  build_deps_aarch64 "$deps"
  : >"$deps/.complete"
fi

# aarch64_probe EXE: EXE runs on glibc 2.31, the arm64 Debian 11 root as qemu's library prefix.
aarch64_probe() {
  "$qemu" -L "$sysroot" "$1" --version >/dev/null ||
    { echo "release: the built cudnnctl does not run under qemu-aarch64-static on the Debian 11 root" >&2; exit 1; }
}

# aarch64_smoke TARBALL VERSION: the tarball's install.sh into a temporary prefix, then that
# cudnnctl under qemu: --version, --help, install (its gate's runtime probe and smoke helper are
# aarch64 executables it runs), a second install, rollback and status against a temporary --root
# and a file:// mirror of two linux-sbsa stub releases whose libraries are aarch64
# (tests/fixtures/mkrelease.py with the cross compiler). It runs in a user and mount namespace of
# its own, made to look like an ARM machine to cudnnctl: a binfmt_misc instance of its own
# (Linux 6.7+) where qemu-aarch64-static runs every aarch64 executable, the bullseye root's
# loader and arm64 libraries added to /usr/lib (an overlay, as libc6:arm64 would add them) and
# its arm64 ldconfig over /usr/sbin/ldconfig (the build machine's indexes no aarch64 library).
# Nothing is registered or mounted for the rest of the machine. Without such a binfmt_misc
# instance only --version and --help are run (qemu -L), and the output says so.
aarch64_smoke() {
  local t v
  t=$(mktemp -d /tmp/cudnnctl-release-aarch64.XXXXXX)
  tar -C "$t" -xzf "$1"
  printf '#!/bin/sh\nexec %s --sysroot=%s "$@"\n' "$cc" "$sysroot" >"$t/cc"
  chmod +x "$t/cc"
  for v in 9.1.0:9.1.0.70 9.27.0:9.27.0.42; do
    python3 "$repo/tests/fixtures/mkrelease.py" --mirror "$t/mirror" --label "${v%%:*}" --version "${v#*:}" \
      --cuda 12 --platform linux-sbsa --no-static --cc "$t/cc" >>"$t/mkrelease.log" 2>&1 ||
      { tail -20 "$t/mkrelease.log" >&2; exit 1; }
  done
  log "smoke test under qemu-aarch64-static in $t"
  unshare --user --map-root-user --mount --fork bash -s "$t" "$qemu" "$sysroot" "$2" <<'EOS' || exit 1
set -euo pipefail
t=$1 qemu=$2 sysroot=$3 version=$4
say() { echo "release: smoke: $*" >&2; }
# expect WHAT PYTHON-EXPR COMMAND...: COMMAND succeeds and PYTHON-EXPR is true of its output
# (`o`; `d`, where it is JSON).
expect() {
  local what=$1 test=$2 out
  shift 2
  out=$("$@" 2>&1) || { say "$what: failed: $out"; exit 1; }
  python3 -c 'import json, sys
o = sys.stdin.read()
try: d = json.loads(o)
except ValueError: d = None
sys.exit(0 if eval(sys.argv[1]) else 1)' "$test" <<<"$out" || { say "$what: not ($test) in: $out"; exit 1; }
  say "$what: ok"
}
if ! mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null; then
  say "no binfmt_misc instance of its own here (Linux < 6.7): cudnnctl's exec of its helpers cannot work under qemu; only --version and --help"
  c=$(echo "$t"/cudnnctl-*/payload/usr/local/bin/cudnnctl)
  expect "--version" "'$version' in o" "$qemu" -L "$sysroot" "$c" --version
  expect "--help" "'install' in o and 'rollback' in o" "$qemu" -L "$sysroot" "$c" --help
  exit 0
fi
printf '%s' ":qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:$qemu:F" \
  >/proc/sys/fs/binfmt_misc/register
mount -t overlay overlay -o "lowerdir=/usr/lib:$sysroot/usr/lib" /usr/lib
mount --bind "$sysroot/usr/sbin/ldconfig" /usr/sbin/ldconfig
say "this namespace: qemu-aarch64-static in its own binfmt_misc, bullseye's arm64 loader, libraries and ldconfig"
"$t"/cudnnctl-*/install.sh --prefix "$t/prefix" >"$t/install.log" 2>&1 || { say "install.sh: $(cat "$t/install.log")"; exit 1; }
say "install.sh --prefix $t/prefix: ok"
c=$t/prefix/bin/cudnnctl
file "$c" | grep -q 'ARM aarch64' || { say "$c is not an aarch64 executable"; exit 1; }
r=$t/root
mkdir -p "$r/etc/ld.so.conf.d"
echo 'include /etc/ld.so.conf.d/*.conf' >"$r/etc/ld.so.conf"
m=(--root "$r" --mirror "file://$t/mirror/" --cuda 12)
expect "--version" "'$version' in o" "$c" --version
expect "--help" "'install' in o and 'rollback' in o" "$c" --help
"$c" "${m[@]}" --json install 9.1.0 >"$t/install.json" 2>&1 || { say "install 9.1.0: failed: $(cat "$t/install.json")"; exit 1; }
expect "install 9.1.0 (linux-sbsa: the machine's platform under qemu)" \
  "d['active']['version'] == '9.1.0.70' and d['active']['platform'] == 'linux-sbsa'" cat "$t/install.json"
expect "its runtime probe loaded the aarch64 libraries" \
  "[x['status'] for x in d['data']['checks'] if x['name'] == 'runtime'] == ['passed']" cat "$t/install.json"
expect "its gate ran cudnnctl-smoke: cuDNN 90100 loaded, no GPU (skipped)" \
  "[x['status'] for x in d['data']['checks'] if x['name'] == 'smoke'] == ['skipped'] and d['data']['smoke']['no_gpu'] and d['data']['smoke']['cudnn_version'] == 90100" \
  cat "$t/install.json"
expect "install 9.27.0" "d['active']['version'] == '9.27.0.42' and d['active']['generation'] == 2" "$c" "${m[@]}" --json install 9.27.0
expect "rollback" "d['active']['version'] == '9.1.0.70'" "$c" "${m[@]}" --json rollback
expect "status" "'9.1.0.70' in o" "$c" "${m[@]}" status
expect "the ld.so cache under the root" "'libcudnn.so.9 (libc6,AArch64) => /opt/cudnn/store/9.1.0.70-cuda12-linux-sbsa/lib/libcudnn.so.9' in o" ldconfig -r "$r" -p
say "active: $(readlink "$r/opt/cudnn/current") -> $(readlink "$r/opt/cudnn/$(readlink "$r/opt/cudnn/current")")"
EOS
  rm -rf "$t"
}
