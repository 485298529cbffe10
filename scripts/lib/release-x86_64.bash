# SPDX-License-Identifier: Apache-2.0
# scripts/release (x86-64, the default): steps 1 and 2, the Debian 11 build root and the static
# libraries; sourced by scripts/release, which builds cudnnctl against them and packs it. Moved
# here unchanged from scripts/release: the text between the "deps key" lines is the cache key
# of the static libraries, so the caches of earlier runs stay valid.
# shellcheck disable=SC2154 # scripts/release's variables (repo, cache, mirror, jobs, log)

# --- 1. The Debian 11 build root (glibc 2.31) ---
sysroot_packages=libc6-dev,linux-libc-dev
sysroot=$cache/sysroot-$(echo "bullseye $sysroot_packages v1" | sha256sum | cut -c1-12)
if [ ! -f "$sysroot/.complete" ]; then
  log "debootstrap bullseye into $sysroot (a few minutes, once)"
  remove_tree "$sysroot"
  debootstrap_root "$mirror" bullseye "$sysroot" "$sysroot_packages" "$cache/debootstrap-sysroot.log" || exit 1
  : >"$sysroot/.complete"
fi
# ld follows the sysroot's symbolic links inside it only when they are relative (the loader
# and libm links are absolute in Debian's packages). Idempotent.
find "$sysroot/usr/lib" "$sysroot/usr/lib64" -type l -lname '/*' | while read -r l; do
  ln -sfnr "$sysroot$(readlink "$l")" "$l"
done
glibc=$(dpkg-query --admindir="$sysroot/var/lib/dpkg" -W -f '${Version}' libc6)
log "build root: Debian 11, libc6 $glibc"

# --- 2. The static libraries ---
host_libs=(libssl-dev libzstd-dev zlib1g-dev libelf-dev nlohmann-json3-dev libcli11-dev)
# liblzma is Debian 13's (xz-utils 5.8): its LZMA decoder takes half the time of Debian 12's 5.4
# on a cuDNN archive (docs/BENCHMARKS.md), and decompression is the floor of an install from
# NVIDIA's .tar.xz. Its .deb comes from the mirror's trixie index, checked as aarch64's are.
trixie_index=$(debian_index "$mirror" trixie amd64 "$cache/index") || exit 1
deps_key=$( (
  sed -n '/^# --- deps key begin/,/^# --- deps key end/p' "${BASH_SOURCE[0]}"
  dpkg-query -W "${host_libs[@]}"
  debian_versions "$trixie_index" liblzma-dev || echo failed
  echo "$sysroot"
) | sha256sum | cut -c1-12)
deps=$cache/deps-$deps_key
# --- deps key begin
build_deps() {
  local d=$1 src=$1/src apt=$1/apt
  mkdir -p "$d/include" "$d/lib" "$src" "$apt/lists/partial" "$apt/cache/archives/partial"
  # Debian 12's .a files and headers (the build machine's -dev packages).
  local ml=/usr/lib/x86_64-linux-gnu inc=/usr/include
  cp -a "$inc/openssl" "$inc/zstd.h" "$inc/zstd_errors.h" "$inc/zdict.h" \
    "$inc/zlib.h" "$inc/zconf.h" "$inc/libelf.h" "$inc/gelf.h" "$inc/nlist.h" \
    "$inc/nlohmann" "$inc/CLI" "$d/include/"
  cp -a "$inc/x86_64-linux-gnu/openssl/." "$d/include/openssl/"
  cp -a "$ml/libssl.a" "$ml/libcrypto.a" "$ml/libzstd.a" "$ml/libz.a" "$ml/libelf.a" "$d/lib/"
  # Debian 13's liblzma.a and headers (above). Its objects ask glibc for nothing 2.31 lacks
  # (malloc, pthreads, clock_gettime, sched_getaffinity, sysconf): check-portable checks.
  debian_fetch "$mirror" "$trixie_index" "$d/debs" liblzma-dev || return 1
  dpkg-deb -x "$d"/debs/liblzma-dev_*.deb "$d/lzma-dev"
  cp -a "$d/lzma-dev/usr/include/lzma.h" "$d/lzma-dev/usr/include/lzma" "$d/include/"
  cp -a "$d/lzma-dev/usr/lib/x86_64-linux-gnu/liblzma.a" "$d/lib/"
  rm -rf "$d/debs" "$d/lzma-dev"
  # libcurl and libarchive from Debian 12's source packages, with a private apt state.
  echo "deb-src $mirror bookworm main" >"$apt/sources.list"
  local A=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Debug::NoLocking=1 -q)
  apt-get "${A[@]}" update >"$d/apt.log" 2>&1
  (cd "$src" && apt-get "${A[@]}" source --download-only curl libarchive >>"$d/apt.log" 2>&1)
  # (apt checked the files against the signed Release; the .dsc signatures need keys we lack.)
  (cd "$src" && dpkg-source -x curl_*.dsc curl && dpkg-source -x libarchive_*.dsc libarchive) >>"$d/apt.log" 2>&1
  local cc="gcc --sysroot=$sysroot"
  # Debian's patches leave configure.ac newer than configure: the shipped configure and
  # Makefile.in are used as they are (no autotools on the build machine).
  local notools="ACLOCAL=true AUTOCONF=true AUTOMAKE=true AUTOHEADER=true"
  local flags="-O2 -fPIC -I$d/include"
  log "building libcurl (HTTP, HTTPS, file only)"
  (cd "$src/curl" && CC=$cc CFLAGS="$flags" CPPFLAGS="-I$d/include" LDFLAGS="-L$d/lib" LIBS="-ldl -lpthread" \
    ./configure --prefix="$d" --disable-shared --enable-static --with-openssl="$d" --with-zlib="$d" \
    --without-ca-bundle --without-ca-path --without-ca-fallback \
    --disable-ftp --disable-ldap --disable-ldaps --disable-rtsp --disable-dict --disable-telnet \
    --disable-tftp --disable-pop3 --disable-imap --disable-smtp --disable-gopher --disable-mqtt \
    --disable-smb --disable-manual --disable-docs --disable-alt-svc --disable-hsts --disable-ntlm \
    --disable-unix-sockets --without-libpsl --without-brotli --without-zstd --without-nghttp2 \
    --without-nghttp3 --without-ngtcp2 --without-libidn2 --without-librtmp --without-libssh2 \
    --without-libssh --without-gssapi --without-libgsasl --enable-threaded-resolver >"$d/curl.log" 2>&1 &&
    make -j"$jobs" $notools -C lib >>"$d/curl.log" 2>&1 && make $notools -C lib install >>"$d/curl.log" 2>&1 &&
    make $notools -C include install >>"$d/curl.log" 2>&1) || { tail -30 "$d/curl.log" >&2; return 1; }
  log "building libarchive (tar with gzip, xz, zstd only)"
  (cd "$src/libarchive" && CC=$cc CFLAGS="$flags" CPPFLAGS="-I$d/include" LDFLAGS="-L$d/lib" \
    ./configure --prefix="$d" --disable-shared --enable-static --disable-bsdtar --disable-bsdcat \
    --disable-bsdcpio --disable-acl --disable-xattr --without-xml2 --without-expat \
    --without-openssl --without-nettle --without-mbedtls --without-lz4 --without-bz2lib \
    --without-lzo2 --without-cng --without-libb2 --without-iconv --with-zstd --with-lzma --with-zlib \
    >"$d/libarchive.log" 2>&1 &&
    make -j"$jobs" $notools libarchive.la >>"$d/libarchive.log" 2>&1 &&
    make $notools install-libLTLIBRARIES install-includeHEADERS >>"$d/libarchive.log" 2>&1) ||
    { tail -30 "$d/libarchive.log" >&2; return 1; }
  rm -rf "$src" "$apt"
}
# --- deps key end
if [ ! -f "$deps/.complete" ]; then
  log "static libraries into $deps (a few minutes, once)"
  remove_tree "$deps"
  build_deps "$deps"
  : >"$deps/.complete"
fi
