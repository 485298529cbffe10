#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A bootable Debian root for the distros suite (tests/e2e/suites/distros.bash):
#   mkroot.sh CACHE_DIR SUITE      (bullseye, bookworm or trixie) prints the finished root
# debootstrap minbase with systemd as PID 1, from the host's own Debian mirror (as
# tests/fleet/mkbase.sh) or $FLEET_DEBIAN_MIRROR; cached in CACHE_DIR/SUITE-<key>, where the key
# hashes this script's package list and set-up. Nothing of cudnnctl's dependencies is installed:
# the portable .deb needs libc6 alone. Never touches the host's /etc, /var or /usr.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 CACHE_DIR SUITE" >&2; exit 2; }
cache=$1 suite=$2
case $suite in bullseye | bookworm | trixie) ;; *) echo "mkroot: unknown suite '$suite'" >&2; exit 2 ;; esac
# --- key begin
packages=(systemd systemd-sysv dbus)
# --- key end
key=$( (sed -n '/^# --- key begin/,/^# --- key end/p' "${BASH_SOURCE[0]}"; sed -n '/^# --- setup begin/,/^# --- setup end/p' "${BASH_SOURCE[0]}") | sha256sum | cut -c1-12)
root=$cache/$suite-$key
if [ -f "$root/.distros-root-complete" ]; then
  echo "$root"
  exit 0
fi
# shellcheck source=../../scripts/lib/debian-root.bash
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/debian-root.bash"
mirror=$(debian_mirror)
[ -n "$mirror" ] || { echo "mkroot: no Debian mirror found in the apt sources; set FLEET_DEBIAN_MIRROR" >&2; exit 1; }
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/$suite-$key.tmp.XXXXXX")
trap 'remove_tree "$tmp"' EXIT
echo "mkroot: debootstrap $suite from $mirror (a few minutes, once)" >&2
incl=$(IFS=,; echo "${packages[*]}")
debootstrap_root "$mirror" "$suite" "$tmp/root" "$incl" "$tmp/debootstrap.log"
r=$tmp/root
# --- setup begin
: >"$r/etc/machine-id"
mkdir -p "$r/var/log/journal"
# Nothing runs at boot but what the suite looks at.
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer; do
  ln -sf /dev/null "$r/etc/systemd/system/$u"
done
ln -sf /dev/null "$r/etc/systemd/system/getty@.service"
ln -sf /dev/null "$r/etc/systemd/system/console-getty.service"
rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/*
# --- setup end
rm -rf --one-file-system "$root"
mv "$r" "$root"
: >"$root/.distros-root-complete"
echo "$root"
