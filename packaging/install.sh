#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs cudnnctl from the release tarball (README "Install"):
#   sudo ./install.sh                    # into /usr/local (bin, libexec, share, lib/systemd/system)
#   ./install.sh --prefix DIR            # anywhere else; the units and scripts name DIR
#   ./install.sh --prefix DIR --uninstall
# Only glibc >= 2.31 is needed on the host. Exit codes: 0 done, 2 usage, 1 a copy failed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=/usr/local
uninstall=0
while [ $# -gt 0 ]; do
  case $1 in
  --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 2; }
    prefix=$2; shift 2 ;;
  --uninstall) uninstall=1; shift ;;
  -h | --help) sed -n '3,7p' "$0"; exit 0 ;;
  *) echo "install.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case $prefix in
/*) ;;
*) echo "install.sh: --prefix must be an absolute path, not '$prefix'" >&2; exit 2 ;;
esac
prefix=${prefix%/}
payload=$here/payload/usr/local
[ -x "$payload/bin/cudnnctl" ] || { echo "install.sh: $payload/bin/cudnnctl is missing: run it from the unpacked tarball" >&2; exit 1; }
files=$(cd "$payload" && find . ! -type d | sed 's|^\./||' | sort)
if [ $uninstall -eq 1 ]; then
  for f in $files; do rm -f "$prefix/$f"; done
  rmdir "$prefix/libexec/cudnnctl" "$prefix/share/cudnnctl" 2>/dev/null || true
  echo "install.sh: removed cudnnctl from $prefix"
  exit 0
fi
for f in $files; do
  mkdir -p "$prefix/$(dirname "$f")"
  # Through a temporary name and a rename: a running cudnnctl keeps its old file.
  cp -P "$payload/$f" "$prefix/$f.install-tmp"
  case $f in
  lib/systemd/system/* | libexec/cudnnctl/rollback-on-failure)
    if [ "$prefix" != /usr/local ]; then
      sed "s|/usr/local/|$prefix/|g" "$payload/$f" >"$prefix/$f.install-tmp"
    fi ;;
  esac
  mv -f "$prefix/$f.install-tmp" "$prefix/$f"
done
if [ "$prefix" = /usr/local ] && [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null 2>&1 || true
fi
"$prefix/bin/cudnnctl" --version >/dev/null || { echo "install.sh: $prefix/bin/cudnnctl does not run here" >&2; exit 1; }
echo "install.sh: installed $("$prefix/bin/cudnnctl" --version) into $prefix"
