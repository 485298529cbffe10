#!/bin/bash
# Self-test of tests/fixtures (mkrelease.py, mkmirror.sh, the stubs) and of lib.bash's
# nginx and standard-mirror helpers (its other helpers and assertions: suites/testlib.bash).
# Needs no cudnnctl binary: gcc, python3, tar/xz, readelf, curl and nginx.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"

M=$E2E_TMP/mirror
PROBE=$(probe_bin)
LIBS9="libcudnn libcudnn_graph libcudnn_ops libcudnn_cnn libcudnn_adv libcudnn_heuristic
       libcudnn_engines_precompiled libcudnn_engines_runtime_compiled"
LIBS8="libcudnn libcudnn_ops_infer libcudnn_ops_train libcudnn_cnn_infer libcudnn_cnn_train
       libcudnn_adv_infer libcudnn_adv_train"
HDRS9="cudnn cudnn_adv cudnn_backend cudnn_cnn cudnn_graph cudnn_ops cudnn_version"
HDRS8="cudnn cudnn_version cudnn_backend cudnn_adv_infer cudnn_adv_train cudnn_cnn_infer
       cudnn_cnn_train cudnn_ops_infer cudnn_ops_train"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# timed CMD...: run CMD (output to $OUT/$ERR); set CPU_MS (CPU of CMD and all its children)
# and WALL_MS, and print both. Only printed: the suite runs beside others under load, so a time
# limit here would fail a correct fixture (timings belong in bench/, not in tests).
timed() {
  run python3 -c 'import resource, subprocess, sys, time
t = time.time(); rc = subprocess.call(sys.argv[1:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.write("%d %d\n" % ((r.ru_utime + r.ru_stime) * 1000, (time.time() - t) * 1000))
sys.exit(rc)' "$@"
  [ "$RC" -eq 0 ] || fail "timed command failed"
  read -r CPU_MS WALL_MS < <(tail -n1 "$ERR")
  _e2e_say "    $1 ${2##*/}: cpu $CPU_MS ms, wall $WALL_MS ms"
}
re() { printf '%s' "$1" | sed 's/[].[\*^$()+?{|]/\\&/g'; }
# names LISTING: member names of a `tar -tv` listing, in archive order
names() { sed -E 's/^([^ ]+ +){5}//; s/ -> .*$//' "$1"; }
# kv KEY [FILE]: value of KEY=VALUE in FILE (default $OUT)
kv() { awk -v k="$1" 'index($0, k "=") == 1 { print substr($0, length(k) + 2) }' "${2:-$OUT}"; }
expect_kv() { expect_eq "$(kv "$1")" "$2" "probe $1"; }

# expect_layout LISTING TOP X.Y.Z: the exact member list, modes, owners, order and links
expect_layout() {
  local lst=$1 top=$2 v=$3 major=${3%%.*} minor libs hdrs static l h s
  minor=${v#*.}
  minor=${minor%%.*}
  if [ "$major" = 8 ]; then
    libs=$LIBS8 hdrs=$HDRS8 static="_static.a _static_v8.a"
  else
    libs=$LIBS9 hdrs=$HDRS9 static="_static_v9.a"
    [ "$minor" -lt 21 ] || libs="$libs libcudnn_engines_tensor_ir"
  fi
  {
    printf '%s\n' "$top/" "$top/LICENSE" "$top/include/" "$top/lib/"
    for h in $hdrs; do printf '%s\n' "$top/include/$h.h" "$top/include/${h}_v$major.h"; done
    for l in $libs; do
      printf '%s\n' "$top/lib/$l.so" "$top/lib/$l.so.$major" "$top/lib/$l.so.$v"
      [ "$l" = libcudnn ] || for s in $static; do echo "$top/lib/$l$s"; done
    done
  } | LC_ALL=C sort >"$E2E_TMP/names.want"
  names "$lst" >"$E2E_TMP/names.got"
  LC_ALL=C sort "$E2E_TMP/names.got" | diff -u "$E2E_TMP/names.want" - >"$E2E_TMP/names.diff" ||
    fail "members of $lst differ: $(cat "$E2E_TMP/names.diff")"
  LC_ALL=C sort -c "$E2E_TMP/names.got" 2>/dev/null || fail "$lst: members are not sorted"
  ! grep -v ' root/root ' "$lst" >/dev/null || fail "$lst: an entry is not owned by root/root"
  local T D='[0-9-]+ [0-9:]+'
  T=$(re "$top")
  for d in "" include/ lib/; do
    grep -qE "^drwxr-xr-x root/root +0 $D $T/$d\$" "$lst" || fail "$lst: directory $top/$d"
  done
  grep -qE "^-rw-r--r-- root/root +[0-9]+ $D $T/LICENSE\$" "$lst" || fail "$lst: LICENSE"
  for h in $hdrs; do
    grep -qE "^-rw-r--r-- root/root +[0-9]+ $D $T/include/${h}(_v$major)?\.h\$" "$lst" ||
      fail "$lst: header $h.h"
  done
  for l in $libs; do
    grep -qE "^lrwxrwxrwx root/root +0 $D $T/lib/$l\.so -> $l\.so\.$major\$" "$lst" ||
      fail "$lst: $l.so is not a symlink to $l.so.$major"
    grep -qE "^lrwxrwxrwx root/root +0 $D $T/lib/$l\.so\.$major -> $l\.so\.$(re "$v")\$" "$lst" ||
      fail "$lst: $l.so.$major is not a symlink to $l.so.$v"
    grep -qE "^-rwxr-xr-x root/root +[0-9]{4,} $D $T/lib/$l\.so\.$(re "$v")\$" "$lst" ||
      fail "$lst: $l.so.$v is not a 0755 regular file"
    [ "$l" = libcudnn ] || for s in $static; do
      grep -qE "^-rw-r--r-- root/root +[0-9]+ $D $T/lib/$l$(re "$s")\$" "$lst" ||
        fail "$lst: static library $l$s"
    done
  done
}

# exports LIB: defined dynamic symbols of LIB, one per line
exports() { readelf --dyn-syms -W "$1" | awk '$5 == "GLOBAL" && $7 != "UND" { print $8 }'; }

###############################################################################################
TEST "mkmirror builds the standard mirror"
timed bash "$E2E_FIXTURES/mkmirror.sh" "$M"
for label in 8.9.7 8.9.6.50 9.1.0 9.27.0; do expect_file "$M/redistrib_$label.json"; done
expect_eq "$(cd "$M" && ls redistrib_*.json | wc -l)" 4 "number of manifests"
expect_exit 0 bash -c "cd '$M' && sha256sum -c SHA256SUMS"

TEST "mkmirror is idempotent: a second run changes no byte"
tree_snapshot "$M" >"$E2E_TMP/mirror.snap1"
expect_exit 0 mkmirror "$M"
tree_snapshot "$M" >"$E2E_TMP/mirror.snap2"
cmp -s "$E2E_TMP/mirror.snap1" "$E2E_TMP/mirror.snap2" ||
  fail "mirror changed: $(diff "$E2E_TMP/mirror.snap1" "$E2E_TMP/mirror.snap2")"
expect_eq "$(grep -c ' f ' "$E2E_TMP/mirror.snap1")" 26 "files in the mirror"

TEST "manifests: sha256, md5 and size of every package match the archive"
python3 - "$M" >"$E2E_TMP/packages" <<'EOF'
import glob, json, os, sys
for p in sorted(glob.glob(os.path.join(sys.argv[1], "redistrib_*.json"))):
    m = json.load(open(p))
    for prod, body in m.items():
        if not isinstance(body, dict):
            continue
        for plat, v in body.items():
            if not isinstance(v, dict):
                continue
            for pk in ([v] if "relative_path" in v else v.values()):
                print(pk["relative_path"], pk["sha256"], pk["md5"], pk["size"])
EOF
expect_eq "$(wc -l <"$E2E_TMP/packages")" 21 "packages listed in the four manifests"
while read -r rel sha md5 size; do
  expect_file "$M/$rel"
  expect_eq "$(sha256sum "$M/$rel" | cut -d' ' -f1)" "$sha" "sha256 of $rel"
  expect_eq "$(md5sum "$M/$rel" | cut -d' ' -f1)" "$md5" "md5 of $rel"
  expect_eq "$(stat -c %s "$M/$rel")" "$size" "size of $rel"
done <"$E2E_TMP/packages"

TEST "manifests: NVIDIA formatting, schemas and key order"
for f in "$M"/redistrib_*.json; do
  expect_ne "$(tail -c1 "$f" | od -An -c | tr -d ' ')" '\n' "last byte of $f"
  expect_eq "$(sed -n 2p "$f")" "    \"release_date\": \"$(json_get 'd["release_date"]' "$f")\","
  # the bytes are exactly json.dumps(indent=4): 4-space indent, one key per line
  expect_exit 0 python3 -c 'import json,sys; t=open(sys.argv[1]).read(); sys.exit(t != json.dumps(json.loads(t), indent=4))' "$f"
done
expect_json 'd["release_product"]' cudnn "$M/redistrib_9.1.0.json"
expect_json 'list(d)' '["release_date", "release_label", "release_product", "cudnn", "cudnn_samples"]' "$M/redistrib_9.1.0.json"
expect_json 'list(d["cudnn"])' '["name", "license", "license_path", "version", "linux-x86_64", "cuda_variant", "linux-sbsa"]' "$M/redistrib_9.1.0.json"
expect_json 'd["cudnn"]["cuda_variant"]' '["11", "12"]' "$M/redistrib_9.1.0.json"
expect_json 'd["cudnn"]["version"]' 9.1.0.70 "$M/redistrib_9.1.0.json"
expect_json 'list(d["cudnn"]["linux-sbsa"])' '["cuda11", "cuda12"]' "$M/redistrib_9.1.0.json"
expect_json 'list(d["cudnn"]["linux-x86_64"]["cuda12"])' '["relative_path", "sha256", "md5", "size"]' "$M/redistrib_9.1.0.json"
expect_json 'type(d["cudnn"]["linux-x86_64"]["cuda12"]["size"]).__name__' str "$M/redistrib_9.1.0.json"
expect_json 'list(d["cudnn_samples"])' '["name", "license", "license_path", "version", "source"]' "$M/redistrib_9.1.0.json"
expect_json 'd["release_date"]' 2024-04-12 "$M/redistrib_9.1.0.json"
expect_json 'list(d["cudnn"])' '["name", "license", "license_path", "version", "cuda_variant", "linux-x86_64", "linux-sbsa"]' "$M/redistrib_8.9.7.json"
expect_json 'list(d["cudnn_samples"]["linux-sbsa"])' '["cuda11", "cuda12"]' "$M/redistrib_8.9.7.json"
expect_json 'd["cudnn"]["cuda_variant"]' '["12", "13"]' "$M/redistrib_9.27.0.json"
expect_json '"cudnn_samples" in d' false "$M/redistrib_9.27.0.json"
expect_json 'd["release_product"]' cudnn-v8-9-cuda-12 "$M/redistrib_8.9.6.50.json"
expect_json 'list(d["cudnn"])' '["name", "license", "license_path", "version", "linux-x86_64", "linux-sbsa"]' "$M/redistrib_8.9.6.50.json"
expect_json 'd["cudnn"]["linux-sbsa"]["relative_path"]' cudnn/linux-sbsa/cudnn-linux-sbsa-8.9.6.50_cuda12-archive.tar.xz "$M/redistrib_8.9.6.50.json"

TEST "mkrelease merges into an existing manifest and refuses conflicts"
G=$E2E_TMP/merge
mk910() { mkrelease --mirror "$G" --label 9.1.0 --version 9.1.0.70 --print "$@"; }
expect_exit 0 mk910 --cuda 12 --platform linux-x86_64 --release-date 2024-04-12
first_sha=$(json_get 'd["archives"][0]["sha256"]')
expect_exit 0 mk910 --cuda 12 --platform linux-sbsa
expect_exit 0 mk910 --cuda 11 --platform linux-x86_64
expect_json 'list(d["cudnn"])' '["name", "license", "license_path", "version", "linux-x86_64", "cuda_variant", "linux-sbsa"]' "$G/redistrib_9.1.0.json"
expect_json 'list(d["cudnn"]["linux-x86_64"])' '["cuda11", "cuda12"]' "$G/redistrib_9.1.0.json"
expect_json 'd["cudnn"]["linux-x86_64"]["cuda12"]["sha256"]' "$first_sha" "$G/redistrib_9.1.0.json"
expect_json 'd["release_date"]' 2024-04-12 "$G/redistrib_9.1.0.json"
# built in one go, the manifest is byte-identical
expect_exit 0 mkrelease --mirror "$E2E_TMP/merge1" --label 9.1.0 --version 9.1.0.70 --cuda 11,12 \
  --platform linux-x86_64,linux-sbsa --release-date 2024-04-12
json_get 'd["cudnn"]["linux-sbsa"]["cuda11"]' "$E2E_TMP/merge1/redistrib_9.1.0.json" >/dev/null
expect_exit 0 mk910 --cuda 11 --platform linux-sbsa
cmp -s "$G/redistrib_9.1.0.json" "$E2E_TMP/merge1/redistrib_9.1.0.json" ||
  fail "merged manifest differs from the one built in one run"
expect_exit 2 mk910 --cuda 12 --platform linux-x86_64 --version 9.1.0.71
expect_contains "$ERR" "lists version 9.1.0.70"
expect_exit 2 mk910 --cuda 12 --platform linux-x86_64 --schema A
expect_contains "$ERR" "schema B"
expect_exit 2 mkrelease --mirror "$G" --label 8.9.6.50 --version 8.9.6.50 --cuda 11,12 \
  --platform linux-x86_64 --schema A
expect_contains "$ERR" "one CUDA major"
expect_exit 2 mkrelease --mirror "$G" --label 9.1.0 --version 9.1.0 --cuda 12 --platform linux-x86_64
expect_exit 2 mkrelease --mirror "$G" --label 9.1.0 --version 9.1.0.70 --cuda 12 --platform windows-x86_64

TEST "archives: layout, modes, owners, order and symlink chains (tar -tJvf)"
for spec in "9.1.0 9.1.0.70 11 linux-x86_64" "9.1.0 9.1.0.70 12 linux-sbsa" \
  "9.27.0 9.27.0.42 13 linux-x86_64" "8.9.7 8.9.7.29 11 linux-sbsa" \
  "8.9.6.50 8.9.6.50 12 linux-x86_64"; do
  read -r label ver cuda plat <<<"$spec"
  top=cudnn-$plat-${ver}_cuda$cuda-archive
  expect_exit 0 tar -tJvf "$M/cudnn/$plat/$top.tar.xz"
  cp "$OUT" "$E2E_TMP/list.$label.$cuda"
  expect_layout "$E2E_TMP/list.$label.$cuda" "$top" "$(echo "$ver" | cut -d. -f1-3)"
done
expect_contains "$E2E_TMP/list.9.27.0.13" "lib/libcudnn_engines_tensor_ir.so.9 -> libcudnn_engines_tensor_ir.so.9.27.0"
expect_not_contains "$E2E_TMP/list.9.1.0.11" "tensor_ir"
expect_contains "$E2E_TMP/list.9.1.0.11" " 2024-04-12 00:00 cudnn-linux-x86_64-9.1.0.70_cuda11-archive/LICENSE"

TEST "archives are deterministic"
expect_exit 0 mkrelease --mirror "$E2E_TMP/det" --label 9.1.0 --version 9.1.0.70 --cuda 11,12 \
  --platform linux-x86_64 --release-date 2024-04-12 --samples
for f in cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda11-archive.tar.xz \
  cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz \
  cudnn_samples/source/cudnn_samples-source-9.1.0.70-archive.tar.xz; do
  cmp -s "$M/$f" "$E2E_TMP/det/$f" || fail "$f differs between two builds"
done

# extract the standard archives used below
X=$E2E_TMP/x
mkdir -p "$X"
for a in linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12 linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda11 \
  linux-x86_64/cudnn-linux-x86_64-9.27.0.42_cuda13 linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12; do
  expect_exit 0 tar -xJf "$M/cudnn/$a-archive.tar.xz" -C "$X"
done
L91=$X/cudnn-linux-x86_64-9.1.0.70_cuda12-archive/lib
L91c11=$X/cudnn-linux-x86_64-9.1.0.70_cuda11-archive/lib
L927=$X/cudnn-linux-x86_64-9.27.0.42_cuda13-archive/lib
L897=$X/cudnn-linux-x86_64-8.9.7.29_cuda12-archive/lib

TEST "headers: cudnn_version.h of each major, _vN twins, cudnn.h compiles and links"
I=$X/cudnn-linux-x86_64-9.1.0.70_cuda12-archive/include
for want in "#define CUDNN_MAJOR 9" "#define CUDNN_MINOR 1" "#define CUDNN_PATCHLEVEL 0" \
  "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)"; do
  expect_contains "$I/cudnn_version.h" "$want"
done
expect_contains "$I/cudnn.h" '#include "cudnn_version.h"'
I8=$X/cudnn-linux-x86_64-8.9.7.29_cuda12-archive/include
expect_contains "$I8/cudnn_version.h" "#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)"
expect_contains "$I8/cudnn_version.h" "#define CUDNN_MINOR 9"
expect_contains "$I8/cudnn_version.h" "#define CUDNN_PATCHLEVEL 7"
for h in $HDRS9; do cmp -s "$I/$h.h" "$I/${h}_v9.h" || fail "$h.h and ${h}_v9.h differ"; done
cat >"$E2E_TMP/hv.c" <<'EOF'
#include <stdio.h>
#include "cudnn.h"
int main(void) {
  printf("%d %d %d %d %zu %s\n", CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL, CUDNN_VERSION,
         cudnnGetVersion(), cudnnGetErrorString(CUDNN_STATUS_SUCCESS));
  return 0;
}
EOF
for spec in "9.1.0.70_cuda12 9 1 0 90100" "9.27.0.42_cuda13 9 27 0 92700" "8.9.7.29_cuda12 8 9 7 8907"; do
  read -r tag maj min pat num <<<"$spec"
  d=$X/cudnn-linux-x86_64-$tag-archive
  expect_exit 0 cc -Wall -Werror -I"$d/include" -o "$E2E_TMP/hv" "$E2E_TMP/hv.c" -L"$d/lib" -lcudnn \
    -Wl,-rpath,"$d/lib"
  expect_exit 0 "$E2E_TMP/hv"
  expect_eq "$(cat "$OUT")" "$maj $min $pat $num $num CUDNN_STATUS_SUCCESS" "hv for $tag"
done

TEST "ELF: SONAME, RUNPATH \$ORIGIN and exported symbols (readelf)"
expect_exit 0 readelf -d -W "$L91/libcudnn.so.9"
expect_contains "$OUT" "Library soname: [libcudnn.so.9]"
expect_contains "$OUT" "Library runpath: [\$ORIGIN]"
expect_not_contains "$OUT" "Library rpath:"
expect_exit 0 readelf -d -W "$L897/libcudnn.so.8"
expect_contains "$OUT" "Library soname: [libcudnn.so.8]"
expect_contains "$OUT" "Library runpath: [\$ORIGIN]"
for l in $LIBS9 libcudnn_engines_tensor_ir; do
  expect_exit 0 readelf -d -W "$L927/$l.so.9"
  expect_contains "$OUT" "Library soname: [$l.so.9]"
  exports "$L927/$l.so.9.27.0" >"$E2E_TMP/syms"
  expect_contains "$E2E_TMP/syms" cudnnctl_stub_version
done
exports "$L91/libcudnn.so.9" >"$E2E_TMP/syms"
for s in cudnnGetVersion cudnnGetCudartVersion cudnnGetErrorString cudnnctl_stub_load_sub; do
  grep -qx "$s" "$E2E_TMP/syms" || fail "libcudnn.so.9 does not export $s"
done
for pair in graph:Graph ops:Ops cnn:Cnn adv:Adv; do
  exports "$L91/libcudnn_${pair%%:*}.so.9" >"$E2E_TMP/syms"
  grep -qx "cudnn${pair#*:}VersionCheck" "$E2E_TMP/syms" || fail "libcudnn_${pair%%:*} lacks its check"
done
exports "$L91/libcudnn_heuristic.so.9" >"$E2E_TMP/syms"
expect_eq "$(grep -c VersionCheck "$E2E_TMP/syms" || true)" 0 "checks exported by libcudnn_heuristic"
for pair in ops_infer:OpsInfer ops_train:OpsTrain cnn_infer:CnnInfer cnn_train:CnnTrain \
  adv_infer:AdvInfer adv_train:AdvTrain; do
  exports "$L897/libcudnn_${pair%%:*}.so.8" >"$E2E_TMP/syms"
  grep -qx "cudnn${pair#*:}VersionCheck" "$E2E_TMP/syms" || fail "libcudnn_${pair%%:*}.so.8 lacks its check"
done
ar t "$L91/libcudnn_ops_static_v9.a" >"$E2E_TMP/ar" || fail "ar t failed"
expect_eq "$(wc -l <"$E2E_TMP/ar")" 1 "members of libcudnn_ops_static_v9.a"

TEST "probe: dlopen the shim by absolute path; sub-libraries load through RUNPATH \$ORIGIN"
expect_exit 0 "$PROBE" "$L91/libcudnn.so.9" libcudnn_graph.so.9 libcudnn_ops.so.9 libcudnn_engines_precompiled.so.9
expect_kv shim "$L91/libcudnn.so.9"
expect_kv getversion 90100
expect_kv stub_version 90100
expect_kv cudart 12040
expect_kv sub.libcudnn_graph.so.9 90100
expect_kv path.libcudnn_graph.so.9 "$L91/libcudnn_graph.so.9"
expect_kv check.libcudnn_graph.so.9 0
expect_kv check.libcudnn_ops.so.9 0
expect_kv sub.libcudnn_engines_precompiled.so.9 90100
expect_exit 0 "$PROBE" "$L91c11/libcudnn.so.9" libcudnn_adv.so.9
expect_kv cudart 11080
expect_kv sub.libcudnn_adv.so.9 90100
expect_kv path.libcudnn_adv.so.9 "$L91c11/libcudnn_adv.so.9"
expect_exit 0 "$PROBE" "$L927/libcudnn.so.9" libcudnn_engines_tensor_ir.so.9 libcudnn_cnn.so.9
expect_kv getversion 92700
expect_kv cudart 13000
expect_kv sub.libcudnn_engines_tensor_ir.so.9 92700
expect_kv check.libcudnn_cnn.so.9 0
expect_exit 0 "$PROBE" "$L897/libcudnn.so.8" libcudnn_ops_infer.so.8 libcudnn_adv_train.so.8
expect_kv getversion 8907
expect_kv cudart 12040
expect_kv sub.libcudnn_ops_infer.so.8 8907
expect_kv check.libcudnn_ops_infer.so.8 0
expect_kv check.libcudnn_adv_train.so.8 0
expect_exit 0 "$PROBE" "$L91/libcudnn.so.9" libcudnn_nonexistent.so.9
expect_kv sub.libcudnn_nonexistent.so.9 -1
expect_contains "$ERR" "libcudnn_nonexistent.so.9"
expect_exit 1 "$PROBE" "$E2E_TMP/no/libcudnn.so.9"

TEST "version checks see a sub-library from another release (mixed install)"
MIX=$E2E_TMP/mix
cp -a "$L91" "$MIX"
cp -P "$L927/libcudnn_ops.so.9.27.0" "$MIX/"
ln -sfn libcudnn_ops.so.9.27.0 "$MIX/libcudnn_ops.so.9"
expect_exit 0 "$PROBE" "$MIX/libcudnn.so.9" libcudnn_ops.so.9 libcudnn_graph.so.9
expect_kv sub.libcudnn_ops.so.9 92700
expect_kv check.libcudnn_ops.so.9 1002
expect_kv check.libcudnn_graph.so.9 0

###############################################################################################
# Defects: each builds 9.1.0 (cuda 12, linux-x86_64) with one lie, compared with a healthy build.
TOP=cudnn-linux-x86_64-9.1.0.70_cuda12-archive
# build_one NAME [EXTRACT=1] [mkrelease ARGS...]: sets D A LST DX DL DI
build_one() {
  local name=$1 extract=$2
  shift 2
  D=$E2E_TMP/defect/$name
  expect_exit 0 mkrelease --mirror "$D" --label 9.1.0 --version 9.1.0.70 --cuda 12 \
    --platform linux-x86_64 --release-date 2024-04-12 --print "$@"
  cp "$OUT" "$D/print.json"
  A=$(json_get 'd["archives"][0]["path"]' "$D/print.json")
  expect_eq "$A" "$D/cudnn/linux-x86_64/$TOP.tar.xz" "archive path"
  LST=$D/listing
  tar -tJvf "$A" >"$LST" 2>"$D/listing.err" || fail "tar -t $A"
  DX=$D/x/$TOP DL=$D/x/$TOP/lib DI=$D/x/$TOP/include
  if [ "$extract" = 1 ]; then
    mkdir -p "$D/x"
    tar -xJf "$A" -C "$D/x" || fail "tar -x $A"
  fi
}
# one_lie PATTERN: outside lines matching PATTERN the listing equals the healthy one
one_lie() {
  diff <(grep -vE "$1" "$HLST") <(grep -vE "$1" "$LST") >"$E2E_TMP/lie.diff" ||
    fail "more than one lie: $(cat "$E2E_TMP/lie.diff")"
}

TEST "healthy 9.1.0 build for the defect comparisons"
build_one healthy 1
HLST=$LST HL=$DL HA=$A
expect_layout "$HLST" "$TOP" 9.1.0
expect_json 'd["archives"][0]["sha256"] == d["archives"][0]["manifest_sha256"]' true "$D/print.json"
cmp -s "$HA" "$M/cudnn/linux-x86_64/$TOP.tar.xz" || fail "healthy build differs from the mirror's"

TEST "defect getversion=90099: cudnnGetVersion lies, nothing else"
build_one getversion 1 --defect getversion=90099
one_lie 'lib/libcudnn\.so\.9\.1\.0$'
expect_exit 0 "$PROBE" "$DL/libcudnn.so.9" libcudnn_graph.so.9
expect_kv getversion 90099
expect_kv stub_version 90100
expect_kv sub.libcudnn_graph.so.9 90100
cmp -s "$DL/libcudnn_ops.so.9.1.0" "$HL/libcudnn_ops.so.9.1.0" || fail "sub-library changed"
! cmp -s "$DL/libcudnn.so.9.1.0" "$HL/libcudnn.so.9.1.0" || fail "shim unchanged"

TEST "defect header=9.0.0: cudnn_version.h says 9.0.0"
build_one header 1 --defect header=9.0.0
one_lie 'include/cudnn_version(_v9)?\.h$'
expect_contains "$DI/cudnn_version.h" "#define CUDNN_MINOR 0"
expect_not_contains "$DI/cudnn_version.h" "#define CUDNN_MINOR 1"
expect_contains "$DI/cudnn_version_v9.h" "#define CUDNN_MINOR 0"
expect_exit 0 "$PROBE" "$DL/libcudnn.so.9"
expect_kv getversion 90100

TEST "defect missing=libcudnn_heuristic: the sub-library is absent"
build_one missing 1 --defect missing=libcudnn_heuristic
one_lie 'libcudnn_heuristic'
expect_not_contains "$LST" libcudnn_heuristic
expect_eq "$(grep -c libcudnn_heuristic "$HLST")" 4 "heuristic entries in the healthy archive"
expect_no_file "$DL/libcudnn_heuristic.so.9"
# graph first: on a box whose ld.so.cache has a real cuDNN 9, the missing heuristic is found
# there and drags in that install's libcudnn_graph.so.9 (a mixed install, as in real life)
expect_exit 0 "$PROBE" "$DL/libcudnn.so.9" libcudnn_graph.so.9 libcudnn_heuristic.so.9
expect_kv sub.libcudnn_heuristic.so.9 -1
expect_kv sub.libcudnn_graph.so.9 90100
expect_exit 2 mkrelease --mirror "$E2E_TMP/defect/x8" --label 8.9.7 --version 8.9.7.29 --cuda 12 \
  --platform linux-x86_64 --defect missing=libcudnn_heuristic
expect_contains "$ERR" "no library 'libcudnn_heuristic' in 8.9.7"

TEST "defect regular-link=libcudnn_ops: .so.9 is a regular copy"
build_one regular-link 1 --defect regular-link=libcudnn_ops
one_lie 'lib/libcudnn_ops\.so\.9( |$)'
grep -qE "^-rwxr-xr-x root/root +[0-9]+ .* $TOP/lib/libcudnn_ops\.so\.9\$" "$LST" || fail "not a regular file in $LST"
[ -f "$DL/libcudnn_ops.so.9" ] && [ ! -L "$DL/libcudnn_ops.so.9" ] || fail "extracted .so.9 is not a regular file"
cmp -s "$DL/libcudnn_ops.so.9" "$DL/libcudnn_ops.so.9.1.0" || fail "copy differs from the real file"
expect_symlink "$DL/libcudnn_ops.so" libcudnn_ops.so.9

TEST "ldconfig -r: a healthy tree is clean, regular-link draws 'is not a symbolic link'"
if [ "$(id -u)" -eq 0 ]; then
  R=$(new_root)
  mkdir -p "$R/opt/h" "$R/opt/r"
  cp -a "$HL" "$R/opt/h/lib"
  cp -a "$DL" "$R/opt/r/lib"
  echo /opt/h/lib >"$R/etc/ld.so.conf.d/00-h.conf"
  expect_exit 0 ldconfig -r "$R"
  expect_not_contains "$ERR" "is not a symbolic link"
  expect_exit 0 ldconfig -p -C "$R/etc/ld.so.cache"
  expect_contains "$OUT" "libcudnn_graph.so.9 (libc6,x86-64) => /opt/h/lib/libcudnn_graph.so.9"
  echo /opt/r/lib >"$R/etc/ld.so.conf.d/01-r.conf"
  expect_exit 0 ldconfig -r "$R"
  expect_contains "$ERR" "/opt/r/lib/libcudnn_ops.so.9 is not a symbolic link"
else
  echo "    (not root: ldconfig -r check left out)"
fi

TEST "defect dangling=libcudnn_cnn: libcudnn_cnn.so points to a missing file"
build_one dangling 1 --defect dangling=libcudnn_cnn
one_lie 'lib/libcudnn_cnn\.so '
[ -L "$DL/libcudnn_cnn.so" ] && [ ! -e "$DL/libcudnn_cnn.so" ] || fail "libcudnn_cnn.so is not dangling"
expect_symlink "$DL/libcudnn_cnn.so.9" libcudnn_cnn.so.9.1.0
[ -e "$HL/libcudnn_cnn.so" ] || fail "healthy libcudnn_cnn.so dangles"

TEST "defect soname=libcudnn_adv:libcudnn_adv.so.8: wrong DT_SONAME"
build_one soname 1 --defect soname=libcudnn_adv:libcudnn_adv.so.8
one_lie 'lib/libcudnn_adv\.so\.9\.1\.0$'
expect_exit 0 readelf -d -W "$DL/libcudnn_adv.so.9.1.0"
expect_contains "$OUT" "Library soname: [libcudnn_adv.so.8]"
expect_exit 0 readelf -d -W "$HL/libcudnn_adv.so.9.1.0"
expect_contains "$OUT" "Library soname: [libcudnn_adv.so.9]"

TEST "defect filever=libcudnn_ops:9.0.0: one file from another release"
build_one filever 1 --defect filever=libcudnn_ops:9.0.0
one_lie 'lib/libcudnn_ops\.so\.9'
expect_no_file "$DL/libcudnn_ops.so.9.1.0"
expect_file "$DL/libcudnn_ops.so.9.0.0"
expect_symlink "$DL/libcudnn_ops.so.9" libcudnn_ops.so.9.0.0
expect_exit 0 "$PROBE" "$DL/libcudnn.so.9" libcudnn_ops.so.9 libcudnn_cnn.so.9
expect_kv sub.libcudnn_ops.so.9 90000
expect_kv check.libcudnn_ops.so.9 1002
expect_kv check.libcudnn_cnn.so.9 0

TEST "defect truncate=libcudnn_graph: the real file is cut to half"
build_one truncate 1 --defect truncate=libcudnn_graph
one_lie 'lib/libcudnn_graph\.so\.9\.1\.0$'
expect_eq "$(stat -c %s "$DL/libcudnn_graph.so.9.1.0")" "$(($(stat -c %s "$HL/libcudnn_graph.so.9.1.0") / 2))" "truncated size"
cmp -s -n "$(stat -c %s "$DL/libcudnn_graph.so.9.1.0")" "$DL/libcudnn_graph.so.9.1.0" "$HL/libcudnn_graph.so.9.1.0" ||
  fail "truncated file is not a prefix of the healthy one"
# loading a truncated ELF either fails or kills the process with SIGBUS (the mapping runs past
# the end of the file): whoever loads candidate libraries must do it in a child process
run "$PROBE" "$DL/libcudnn.so.9" libcudnn_graph.so.9
expect_kv getversion 90100
[ "$RC" -ne 0 ] || [ "$(kv sub.libcudnn_graph.so.9)" = -1 ] || fail "truncated library loaded"

TEST "defect unresolvable=libcudnn_cnn: DT_NEEDED on a library that does not exist"
build_one unresolvable 1 --defect unresolvable=libcudnn_cnn
one_lie 'lib/libcudnn_cnn\.so\.9\.1\.0$'
expect_exit 0 readelf -d -W "$DL/libcudnn_cnn.so.9.1.0"
expect_contains "$OUT" "Shared library: [libcudnnctl_missing_dep.so.1]"
expect_not_contains "$LST" libcudnnctl_missing_dep
expect_exit 0 "$PROBE" "$DL/libcudnn.so.9" libcudnn_cnn.so.9 libcudnn_adv.so.9
expect_kv sub.libcudnn_cnn.so.9 -1
expect_kv sub.libcudnn_adv.so.9 90100
expect_contains "$ERR" "libcudnnctl_missing_dep.so.1"

TEST "defect no-version-header: cudnn_version.h is absent"
build_one no-version-header 1 --defect no-version-header
one_lie 'include/cudnn_version(_v9)?\.h$'
expect_no_file "$DI/cudnn_version.h"
expect_no_file "$DI/cudnn_version_v9.h"
expect_file "$DI/cudnn.h"

TEST "defects that attack the extractor: absolute/escaping symlinks, .. and outside-top members, setuid"
build_one abs-symlink 0 --defect abs-symlink=libcudnn_ops
one_lie 'lib/libcudnn_ops\.so '
expect_contains "$LST" "$TOP/lib/libcudnn_ops.so -> /etc/passwd"
build_one escape-symlink 0 --defect escape-symlink=libcudnn_ops
one_lie 'lib/libcudnn_ops\.so '
expect_contains "$LST" "$TOP/lib/libcudnn_ops.so -> ../../../../../../etc/passwd"
build_one dotdot-entry 0 --defect dotdot-entry
one_lie 'cudnnctl_evil'
expect_contains "$LST" " $TOP/../cudnnctl_evil.txt"
build_one outside-top 0 --defect outside-top
one_lie 'cudnnctl_outside_top'
grep -qE '^-rw-r--r-- root/root +[0-9]+ [0-9-]+ [0-9:]+ cudnnctl_outside_top\.txt$' "$LST" || fail "no outside-top member"
build_one setuid 0 --defect setuid=libcudnn_graph
one_lie 'lib/libcudnn_graph\.so\.9\.1\.0$'
grep -qE "^-rwsr-xr-x root/root .* $TOP/lib/libcudnn_graph\.so\.9\.1\.0\$" "$LST" || fail "not setuid"

TEST "defects bad-sha256 / bad-size: the manifest lies, the archive is healthy"
build_one bad-sha256 0 --defect bad-sha256
cmp -s "$A" "$HA" || fail "archive differs from the healthy one"
expect_ne "$(json_get 'd["archives"][0]["manifest_sha256"]' "$D/print.json")" "$(sha256sum "$A" | cut -d' ' -f1)" "manifest sha256"
expect_json 'd["cudnn"]["linux-x86_64"]["cuda12"]["size"]' "$(stat -c %s "$A")" "$D/redistrib_9.1.0.json"
build_one bad-size 0 --defect bad-size
cmp -s "$A" "$HA" || fail "archive differs from the healthy one"
expect_json 'd["cudnn"]["linux-x86_64"]["cuda12"]["sha256"]' "$(sha256sum "$A" | cut -d' ' -f1)" "$D/redistrib_9.1.0.json"
expect_json 'd["cudnn"]["linux-x86_64"]["cuda12"]["size"]' "$(($(stat -c %s "$A") + 1))" "$D/redistrib_9.1.0.json"

TEST "bad defect options are refused"
expect_exit 2 mkrelease --mirror "$E2E_TMP/bad" --label 9.1.0 --version 9.1.0.70 --cuda 12 \
  --platform linux-x86_64 --defect nonsense
expect_contains "$ERR" "unknown defect"
expect_exit 2 mkrelease --mirror "$E2E_TMP/bad" --label 9.1.0 --version 9.1.0.70 --cuda 12 \
  --platform linux-x86_64 --defect filever=libcudnn_ops
expect_exit 2 mkrelease --mirror "$E2E_TMP/bad" --label 9.1.0 --version 9.1.0.70 --cuda 12 \
  --platform linux-x86_64 --defect truncate
expect_no_file "$E2E_TMP/bad/redistrib_9.1.0.json"

###############################################################################################
TEST "padding: --pad makes big files; --pad-random makes them incompressible"
build_one pad 1 --pad 200000
for l in $LIBS9; do
  s=$(stat -c %s "$DL/$l.so.9.1.0")
  [ "$s" -ge 200000 ] && [ "$s" -lt 240000 ] || fail "$l.so.9.1.0 is $s bytes"
done
[ "$(stat -c %s "$A")" -lt 100000 ] || fail "zero padding should compress well"
build_one padrand 1 --pad libcudnn_engines_precompiled=300000 --pad-random
[ "$(stat -c %s "$DL/libcudnn_engines_precompiled.so.9.1.0")" -ge 300000 ] || fail "not padded"
[ "$(stat -c %s "$DL/libcudnn_ops.so.9.1.0")" -lt 40000 ] || fail "libcudnn_ops padded too"
[ "$(stat -c %s "$A")" -ge 300000 ] || fail "random padding compressed away"
expect_exit 0 "$PROBE" "$DL/libcudnn.so.9" libcudnn_engines_precompiled.so.9
expect_kv sub.libcudnn_engines_precompiled.so.9 90100

TEST "mkrelease builds one release for two CUDA majors on two platforms (4 archives)"
timed python3 "$E2E_FIXTURES/mkrelease.py" --mirror "$E2E_TMP/perf" \
  --label 9.27.0 --version 9.27.0.42 --cuda 12,13 --platform linux-x86_64,linux-sbsa
expect_file "$E2E_TMP/perf/redistrib_9.27.0.json"
for plat in linux-x86_64 linux-sbsa; do
  for cu in cuda12 cuda13; do
    rel=$(json_get "d['cudnn']['$plat']['$cu']['relative_path']" "$E2E_TMP/perf/redistrib_9.27.0.json")
    expect_file "$E2E_TMP/perf/$rel"
  done
done

###############################################################################################
TEST "nginx serves the mirror (start_nginx, curl, Range, 404)"
start_nginx "$M"
URL1=$MIRROR_URL PID1=$NGINX_PID
[[ "$MIRROR_URL" =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || fail "MIRROR_URL is '$MIRROR_URL'"
expect_exit 0 curl -sSf -o "$E2E_TMP/got.json" "$MIRROR_URL/redistrib_9.1.0.json"
cmp -s "$E2E_TMP/got.json" "$M/redistrib_9.1.0.json" || fail "served manifest differs"
rel=$(json_get 'd["cudnn"]["linux-x86_64"]["cuda12"]["relative_path"]' "$M/redistrib_9.1.0.json")
expect_exit 0 curl -sSf -o "$E2E_TMP/got.tar.xz" "$MIRROR_URL/$rel"
expect_eq "$(sha256sum <"$E2E_TMP/got.tar.xz" | cut -d' ' -f1)" \
  "$(json_get 'd["cudnn"]["linux-x86_64"]["cuda12"]["sha256"]' "$M/redistrib_9.1.0.json")" "served archive sha256"
expect_exit 0 curl -sS -r 0-99 -o "$E2E_TMP/part" -w '%{http_code}' "$MIRROR_URL/$rel"
expect_eq "$(cat "$OUT")" 206 "status of a Range request"
expect_eq "$(stat -c %s "$E2E_TMP/part")" 100 "bytes of a Range request"
expect_exit 0 curl -sS -o /dev/null -w '%{http_code}' "$MIRROR_URL/redistrib_0.0.0.json"
expect_eq "$(cat "$OUT")" 404 "status of a missing file"
expect_contains "$NGINX_DIR/access.log" "GET /redistrib_9.1.0.json"
expect_contains "$NGINX_DIR/nginx.conf" "root $(cd "$M" && pwd -P);"

TEST "nginx limit_rate and stop_nginx PID"
mkdir -p "$E2E_TMP/slow"
head -c 98304 /dev/zero >"$E2E_TMP/slow/blob"
start_nginx "$E2E_TMP/slow" 48k
expect_ne "$MIRROR_URL" "$URL1" "second server URL"
t0=$(now_ms)
expect_exit 0 curl -sSf -o /dev/null "$MIRROR_URL/blob"
dt=$(($(now_ms) - t0))
[ "$dt" -ge 1000 ] || fail "98304 bytes at 48k/s took only $dt ms"
expect_contains "$NGINX_DIR/nginx.conf" "limit_rate 48k;"
PID2=$NGINX_PID URL2=$MIRROR_URL
stop_nginx "$PID2"
! kill -0 "$PID2" 2>/dev/null || fail "nginx $PID2 still runs"
expect_exit '!0' curl -sS -o /dev/null "$URL2/blob"
kill -0 "$PID1" 2>/dev/null || fail "stop_nginx PID stopped the other server too"
expect_exit 0 curl -sSf -o /dev/null "$URL1/SHA256SUMS"

TEST "lib.bash: std_mirror builds once and prints the path"
SM=$(std_mirror)
expect_eq "$SM" "$E2E_TMP/mirror"
expect_file "$SM/SHA256SUMS"
(cd "$SM" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS of the standard mirror"
