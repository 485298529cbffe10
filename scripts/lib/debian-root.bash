# SPDX-License-Identifier: Apache-2.0
# Debian roots made with debootstrap, for scripts/release (the Debian 11 build root) and the
# suites that boot or import Debian containers (tests/distros/mkroot.sh, tests/fleet/mkbase.sh).
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
