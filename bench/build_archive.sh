#!/bin/bash
# bench/build_archive.sh CACHE_DIR: builds (once) a real-size cuDNN 9.19 archive in NVIDIA's
# layout from the cuDNN files of the local CUDA install, and a matching manifest.
#   CACHE_DIR/<key>/cudnn/linux-x86_64/cudnn-linux-x86_64-9.19.0.56_cuda13-archive.tar.xz
#   CACHE_DIR/<key>/redistrib_9.19.0.json   (unpinned label; schema B)
# Prints the mirror directory CACHE_DIR/<key>. <key> hashes the inputs' contents and this
# script, so a change of either builds again. $BENCH_CUDA (default /usr/local/cuda)
# is only read, never modified. Compression: single-threaded `xz -6`, the conservative
# assumption about NVIDIA's archives (several minutes); $BENCH_XZ_THREADS=N for `xz -T N`
# (the GPU machine: docs/gpu-runs).
set -euo pipefail
cache=${1:?usage: build_archive.sh CACHE_DIR}
cuda=${BENCH_CUDA:-/usr/local/cuda}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=9.19.0.56 label=9.19.0 major=9 cudamaj=13 plat=linux-x86_64
top=cudnn-$plat-${version}_cuda$cudamaj-archive
rel=cudnn/$plat/$top.tar.xz

shopt -s nullglob
libs=("$cuda"/lib/libcudnn*.so.$major)
hdrs=("$cuda"/include/cudnn*.h)
[ ${#libs[@]} -gt 0 ] && [ ${#hdrs[@]} -gt 0 ] || {
  echo "build_archive: no libcudnn*.so.$major / cudnn*.h under $cuda" >&2
  exit 125
}
# The key hashes the inputs' contents (about a second), not their mtimes.
key=$( {
  if command -v openssl >/dev/null; then
    openssl dgst -sha256 -r "${libs[@]}" "${hdrs[@]}"
  else
    sha256sum "${libs[@]}" "${hdrs[@]}"
  fi | awk '{print $1}'
  sha256sum "${BASH_SOURCE[0]}" | awk '{print $1}'
} | sha256sum | cut -c1-16)
out=$cache/$key
if [ -f "$out/redistrib_$label.json" ] && [ -f "$out/$rel" ]; then
  echo "$out"
  exit 0
fi

rm -rf "$out"
mkdir -p "$out/cudnn/$plat"
work=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
t=$work/$top
mkdir -p "$t/lib" "$t/include"
for f in "${libs[@]}"; do
  b=$(basename "$f" ".so.$major") # libcudnn_ops
  cp --reflink=auto -L "$f" "$t/lib/$b.so.$label"
  chmod 0755 "$t/lib/$b.so.$label"
  ln -s "$b.so.$label" "$t/lib/$b.so.$major"
  ln -s "$b.so.$major" "$t/lib/$b.so"
done
for f in "${hdrs[@]}"; do
  install -m 0644 "$f" "$t/include/"
done
printf 'Benchmark archive built by cudnnctl bench/build_archive.sh from %s.\n' "$cuda" >"$t/LICENSE"
chmod 0755 "$t" "$t/lib" "$t/include"
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime=2025-01-01 \
  --format=gnu -cf - "$top" | xz -6 -T"${BENCH_XZ_THREADS:-1}" >"$work/archive.tar.xz"
mv "$work/archive.tar.xz" "$out/$rel"
python3 "$here/mkmanifest.py" --label "$label" --version "$version" --cuda "$cudamaj" \
  --platform "$plat" --relative-path "$rel" --archive "$out/$rel" \
  >"$out/redistrib_$label.json"
echo "$out"
