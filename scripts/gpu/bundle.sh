#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu/bundle.sh BIN_DIR: copy the shared libraries that BIN_DIR/cudnnctl needs, except
# glibc's and the C++ runtime, into BIN_DIR/lib, so that a cudnnctl built on Debian 12 runs on
# another distribution (the GPU machine runs Ubuntu 24.04, whose libldap and libicu sonames
# differ). scripts/gpu/smoke_real.sh puts BIN_DIR/lib on cudnnctl's LD_LIBRARY_PATH only; the
# cudnnctl-smoke helper needs nothing but glibc and libstdc++ and always runs with a clean
# environment. Build with -DCMAKE_BUILD_TYPE=Release to keep BIN_DIR small.
set -euo pipefail
bin=${1:?usage: bundle.sh BIN_DIR}
[ -x "$bin/cudnnctl" ] || { echo "bundle.sh: no $bin/cudnnctl" >&2; exit 2; }
mkdir -p "$bin/lib"
ldd "$bin/cudnnctl" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
  case $name in
  libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.* | \
    ld-linux*.so.* | libstdc++.so.* | libgcc_s.so.*) continue ;;
  esac
  cp -L "$path" "$bin/lib/$name"
done
du -sh "$bin/lib" "$bin/cudnnctl" "$bin/cudnnctl-smoke"
