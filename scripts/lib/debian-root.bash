# SPDX-License-Identifier: Apache-2.0
# Debian roots made with debootstrap, for scripts/release (the Debian 11 build root) and the
# suites that boot or import Debian containers (tests/distros/mkroot.sh, tests/fleet/mkbase.sh),
# and single .debs fetched from the mirror's signed indexes (scripts/release --arch aarch64).
# Source it; it defines functions only.

# debian_mirror: the Debian mirror to debootstrap from: $RELEASE_DEBIAN_MIRROR or
# $FLEET_DEBIAN_MIRROR, else the first non-security URI of the host's apt sources (deb822
# .sources files, then sources.list). Prints nothing when there is none.
debian_mirror() {
  local m=${RELEASE_DEBIAN_MIRROR:-${FLEET_DEBIAN_MIRROR:-}}
  if [ -z "$m" ]; then
    m=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
      grep -v security | head -1 || true)
  fi
  if [ -z "$m" ]; then
    m=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/) { print $i; exit } }' \
      /etc/apt/sources.list 2>/dev/null || true)
  fi
  printf '%s\n' "$m"
}

# remove_tree DIR: unmounts whatever debootstrap left mounted under DIR (deepest first), then
# removes DIR without crossing into another filesystem.
remove_tree() {
  awk -v t="$1/" 'index($2, t) == 1 { print $2 }' /proc/self/mounts | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
  rm -rf --one-file-system "$1"
}

# debootstrap_root MIRROR SUITE TARGET PACKAGES LOG: debootstrap --variant=minbase of SUITE from
# MIRROR (debian_mirror's) with the comma-separated PACKAGES into TARGET, its output in LOG (the
# last lines printed on failure). dpkg runs with force-unsafe-io while the root is made (no fsync of every
# unpacked file, as Debian's own container images do: a root that is cut off is made again, never
# used) and the setting is removed afterwards.
debootstrap_root() {
  local mirror=$1 suite=$2 target=$3 packages=$4 log=$5
  mkdir -p "$target/etc/dpkg/dpkg.cfg.d"
  echo force-unsafe-io >"$target/etc/dpkg/dpkg.cfg.d/00-debootstrap-unsafe-io"
  debootstrap --variant=minbase --include="$packages" "$suite" "$target" "$mirror" >"$log" 2>&1 || {
    tail -30 "$log" >&2
    return 1
  }
  rm -f "$target/etc/dpkg/dpkg.cfg.d/00-debootstrap-unsafe-io"
}

# debootstrap_foreign_root MIRROR SUITE ARCH TARGET PACKAGES LOG: a root of another architecture
# that is only read, never run (scripts/release --arch aarch64's build root): debootstrap
# --foreign --arch=ARCH --variant=minbase of SUITE, whose first stage unpacks the required
# packages and only downloads the rest; then each of the comma-separated PACKAGES is unpacked
# from those downloads (no second stage: that runs ARCH's dpkg in a chroot). Output in LOG.
debootstrap_foreign_root() {
  local mirror=$1 suite=$2 arch=$3 target=$4 packages=$5 log=$6 p deb
  debootstrap --foreign --arch="$arch" --variant=minbase --include="$packages" "$suite" "$target" "$mirror" >"$log" 2>&1 || {
    tail -30 "$log" >&2
    return 1
  }
  for p in ${packages//,/ }; do
    deb=$(ls "$target/var/cache/apt/archives/${p}_"*"_$arch.deb" 2>/dev/null | head -1)
    [ -n "$deb" ] || { echo "debootstrap_foreign_root: $p was not downloaded (see $log)" >&2; return 1; }
    # Into the merged /usr: lib/ stays the link debootstrap made.
    dpkg-deb --fsys-tarfile "$deb" | tar -C "$target" --keep-directory-symlink -xf - || return 1
  done
}

# debian_index MIRROR SUITE ARCH DIR: prints the path of the Packages index of SUITE's main
# component for ARCH, kept decompressed in DIR: its SHA-256 is taken from the InRelease that gpgv
# verifies with Debian's archive keyring (fetched each time, 150 KB); the index itself (9 MB) is
# fetched again only when that SHA-256 changes. When the InRelease cannot be fetched (no
# network), the newest index of SUITE and ARCH already in DIR (checked the same way when it was
# fetched) is used, and said so; with none there, it fails.
debian_index() {
  local mirror=$1 suite=$2 arch=$3 dir=$4 sum out
  mkdir -p "$dir"
  if ! curl -fsSL --retry 3 -o "$dir/InRelease-$suite.new" "$mirror/dists/$suite/InRelease"; then
    rm -f "$dir/InRelease-$suite.new"
    out=$(ls -t "$dir/Packages-$suite-$arch-"???????????? 2>/dev/null | head -1)
    [ -n "$out" ] || { echo "debian_index: $mirror/dists/$suite/InRelease cannot be fetched and no $suite $arch index was fetched before" >&2; return 1; }
    echo "debian_index: $mirror/dists/$suite/InRelease cannot be fetched: using the $suite $arch index fetched $(date -u -r "$out" '+%Y-%m-%d %H:%M UTC')" >&2
    printf '%s\n' "$out"
    return 0
  fi
  mv "$dir/InRelease-$suite.new" "$dir/InRelease-$suite"
  gpgv --keyring /usr/share/keyrings/debian-archive-keyring.gpg --output "$dir/Release-$suite" \
    "$dir/InRelease-$suite" 2>"$dir/gpgv.log" || { echo "debian_index: $mirror/dists/$suite/InRelease: bad signature ($dir/gpgv.log)" >&2; return 1; }
  sum=$(awk -v f="main/binary-$arch/Packages.xz" '/^SHA256:/ { s = 1; next } /^[^ ]/ { s = 0 } s && $3 == f { print $1 }' "$dir/Release-$suite")
  [ -n "$sum" ] || { echo "debian_index: $suite's Release names no main/binary-$arch/Packages.xz" >&2; return 1; }
  out=$dir/Packages-$suite-$arch-${sum:0:12}
  if [ ! -f "$out" ]; then
    curl -fsSL --retry 3 -o "$out.xz" "$mirror/dists/$suite/main/binary-$arch/Packages.xz" || return 1
    echo "$sum  $out.xz" | sha256sum -c --quiet >/dev/null ||
      { echo "debian_index: $suite/main/binary-$arch/Packages.xz does not match its Release" >&2; return 1; }
    xz -dc "$out.xz" >"$out.tmp" && mv "$out.tmp" "$out" && rm -f "$out.xz"
  fi
  printf '%s\n' "$out"
}

# debian_field INDEX PACKAGE FIELD: FIELD (Version, Filename, SHA256) of PACKAGE's stanza in INDEX.
debian_field() {
  awk -v p="Package: $2" -v f="$3: " 'BEGIN { RS = ""; FS = "\n" }
    $1 == p { for (i = 2; i <= NF; i++) if (index($i, f) == 1) { print substr($i, length(f) + 1); exit } }' "$1"
}

# debian_versions INDEX PACKAGE...: "PACKAGE VERSION" per line (a cache key); fails on a package
# the index lacks.
debian_versions() {
  local index=$1 p v
  shift
  for p in "$@"; do
    v=$(debian_field "$index" "$p" Version)
    [ -n "$v" ] || { echo "debian_versions: $p is not in $index" >&2; return 1; }
    echo "$p $v"
  done
}

# debian_fetch MIRROR INDEX DIR PACKAGE...: downloads each PACKAGE's .deb named in INDEX into
# DIR, checked against the SHA-256 the index gives.
debian_fetch() {
  local mirror=$1 index=$2 dir=$3 p f sum
  shift 3
  mkdir -p "$dir"
  for p in "$@"; do
    f=$(debian_field "$index" "$p" Filename)
    sum=$(debian_field "$index" "$p" SHA256)
    [ -n "$f" ] && [ -n "$sum" ] || { echo "debian_fetch: $p is not in $index" >&2; return 1; }
    curl -fsSL --retry 3 -o "$dir/${f##*/}" "$mirror/$f" || { echo "debian_fetch: $mirror/$f: download failed" >&2; return 1; }
    echo "$sum  $dir/${f##*/}" | sha256sum -c --quiet >/dev/null ||
      { echo "debian_fetch: $mirror/$f does not match the index's SHA-256" >&2; return 1; }
  done
}
