#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Debian 12 root every fleet node boots from (one overlay per node on top of it):
#   mkbase.sh CACHE_DIR        prints the path of the finished root
# Built with debootstrap from the host's own Debian mirror (the first URIs of its apt
# sources, or $FLEET_DEBIAN_MIRROR) and cached in CACHE_DIR/base-<key>, where the key hashes
# this script: a change of the package list or of the set-up builds a new root. Building takes
# about 3 minutes; a cached root is used as it is. Never touches the host's /etc, /var or /usr.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 CACHE_DIR" >&2; exit 2; }
cache=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# What the nodes need: their own systemd as PID 1 (systemd-sysv, dbus), sshd and python3 for
# Ansible (python3-apt for its apt module), cudnnctl's run-time libraries (so that the .deb
# installs offline with its Debian dependencies already there), and Slurm (slurmd, slurmctld,
# munge) for the prolog test.
# --- key begin
packages=(
  systemd systemd-sysv dbus libpam-systemd python3 python3-apt openssh-server
  libcurl4 libarchive13 libssl3 libelf1 zstd xz-utils procps
  slurmd slurmctld slurm-client munge
)

# The cache key: the package list and the set-up below (the text between the key markers).
key=$(sed -n '/^# --- key begin/,/^# --- key end/p' "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)
base=$cache/base-$key
if [ -f "$base/.fleet-base-complete" ]; then
  echo "$base"
  exit 0
fi

# shellcheck source=../../scripts/lib/debian-root.bash
source "$here/../../scripts/lib/debian-root.bash"
mirror=$(debian_mirror)
[ -n "$mirror" ] || { echo "mkbase: no Debian mirror found in the apt sources; set FLEET_DEBIAN_MIRROR" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "mkbase: debootstrap is not installed" >&2; exit 1; }

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/base-$key.tmp.XXXXXX")
# debootstrap mounts proc and sys inside the target while it runs: unmount whatever is left
# under $tmp (deepest first) before removing it, and never cross into another filesystem.
trap 'remove_tree "$tmp"' EXIT
echo "mkbase: debootstrap bookworm from $mirror into $tmp (a few minutes)" >&2
incl=$(
  IFS=,
  echo "${packages[*]}"
)
debootstrap_root "$mirror" bookworm "$tmp/root" "$incl" "$tmp/debootstrap.log"
r=$tmp/root

# --- Set-up shared by every node (per-node identity comes from the overlay: fleet.bash) ---
# Each node gets its own machine-id and SSH host keys at test time.
: >"$r/etc/machine-id"
rm -f "$r"/etc/ssh/ssh_host_*
# A persistent journal, so that `journalctl -b -1` shows the boot before a reboot.
mkdir -p "$r/var/log/journal"
# sshd: root logs in with a key only; the port comes from the node's sshd_config.d.
mkdir -p "$r/etc/ssh/sshd_config.d"
cat >"$r/etc/ssh/sshd_config.d/00-fleet.conf" <<'EOC'
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
EOC
# Nothing but what the tests look at runs at boot: no periodic apt, no getty on a console
# nobody reads, no Slurm or munge unless a test enables them on one node.
for u in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
  fstrim.timer systemd-timesyncd.service console-getty.service getty@tty1.service \
  slurmd.service slurmctld.service munge.service; do
  ln -sf /dev/null "$r/etc/systemd/system/$u"
done
# apt in a node never reaches out (the .deb is installed with its dependencies present).
rm -rf "$r/var/lib/apt/lists/"* "$r/var/cache/apt/archives/"*.deb
echo "fleet-node" >"$r/etc/hostname"
touch "$r/.fleet-base-complete"
# --- key end

rm -rf "$base"
mv "$r" "$base"
echo "$base"
