# SPDX-License-Identifier: Apache-2.0
# What the repack suites (repack, repackforms) start from: the standard mirror on nginx ($SRC),
# the 9.1.0 CUDA 12 archive's names ($A91, its repack $Z91, its sha256 $SHA91, the sidecar's
# mirror path $SC), the site mirror's directory $D (made by each suite), and host_root. Source
# after lib.bash.

[ -z "${_E2E_REPACK_LIB_LOADED:-}" ] || return 0
_E2E_REPACK_LIB_LOADED=1

command -v zstd >/dev/null || skip "the zstd CLI is not installed (scripts/install-deps)"
M=$(std_mirror)
start_nginx "$M"
SRC=$MIRROR_URL
D=$E2E_TMP/site
A91=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
Z91=${A91%.tar.xz}.tar.zst
SHA91=$(sha256sum "$M/$A91" | cut -d' ' -f1)
SC=cudnnctl-repack/$SHA91.json

# host_root PINSFILE: a fresh root that trusts PINSFILE.
host_root() {
  local r
  r=$(new_root)
  mkdir -p "$r/etc/cudnnctl/pins.d"
  cp "$1" "$r/etc/cudnnctl/pins.d/site.sha256"
  echo "$r"
}
