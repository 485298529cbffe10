# SPDX-License-Identifier: Apache-2.0
# `mirror --repack zstd` and installs from the repack: the site mirror decompresses NVIDIA's
# xz once; hosts stream its .tar.zst only when a site pin names the sidecar, and check every
# extracted file against the sidecar. Every refusal falls back to the original xz with a
# warning. Real nginx on loopback, real archives (mkmirror), real zstd.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
command -v zstd >/dev/null || skip "the zstd CLI is not installed (scripts/install-deps)"

M=$(std_mirror)
start_nginx "$M"
SRC=$MIRROR_URL
R0=$(new_root)
D=$E2E_TMP/site
A91=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
Z91=${A91%.tar.xz}.tar.zst
TOP=$(basename "$A91" .tar.xz)
SHA91=$(sha256sum "$M/$A91" | cut -d' ' -f1)
SC=cudnnctl-repack/$SHA91.json
export LC_ALL=C

# sidecar_get EXPR [FILE]: a value of the sidecar (python expression over s).
sidecar_get() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "${2:-$D/$SC}" "$1"; }
# host_root PINSFILE: a fresh root that trusts PINSFILE.
host_root() {
  local r
  r=$(new_root)
  mkdir -p "$r/etc/cudnnctl/pins.d"
  cp "$1" "$r/etc/cudnnctl/pins.d/site.sha256"
  echo "$r"
}
# installed_sums ROOT: sha256 of every file the active entry holds, by path.
installed_sums() { (cd "$1/opt/cudnn/current/" && find -L . -type f ! -name '.cudnnctl-entry.json' -exec sha256sum {} + | sort -k2); }
# copy_site NAME: a copy of the site mirror to tamper with, served by its own nginx ($MIRROR_URL).
copy_site() {
  cp -a "$D" "$E2E_TMP/$1"
  start_nginx "$E2E_TMP/$1"
}

TEST "mirror --repack zstd: a tar.zst and a sidecar beside NVIDIA's bytes, both pinned"
expect_exit 0 cudnnctl --root "$R0" --mirror "$SRC" --platform linux-x86_64 --cuda 12 --json \
  mirror 9.1.0 --to "$D" --repack zstd
expect_json 'd["data"]["repacked"]' 1
expect_json 'd["data"]["releases"][0]["archives"][0]["repack"]["state"]' written
expect_json 'd["data"]["releases"][0]["archives"][0]["repack"]["relative_path"]' "$Z91"
cmp "$M/redistrib_9.1.0.json" "$D/redistrib_9.1.0.json" || fail "the manifest is not byte for byte NVIDIA's"
cmp "$M/$A91" "$D/$A91" || fail "the original archive changed"
expect_file "$D/$Z91"
expect_exit 0 zstd -q -t "$D/$Z91"
expect_eq "$(sidecar_get 's["original"]["sha256"]')" "$SHA91"
expect_eq "$(sidecar_get 's["original"]["relative_path"]')" "$A91"
expect_eq "$(sidecar_get 's["repack"]["sha256"]')" "$(sha256sum "$D/$Z91" | cut -d' ' -f1)"
expect_eq "$(sidecar_get 's["repack"]["size"]')" "$(stat -c %s "$D/$Z91")"
expect_eq "$(sidecar_get 's["repack"]["zstd_level"]')" 3
grep -qxF "$(sha256sum "$D/$SC" | cut -d' ' -f1)  $SC" "$D/cudnnctl-pins.sha256" ||
  fail "the pins file does not pin the sidecar: $(cat "$D/cudnnctl-pins.sha256")"
grep -q ' redistrib_9.1.0.json$' "$D/cudnnctl-pins.sha256" || fail "the manifest pin is gone"
# The sidecar's per-file sha256 are those of NVIDIA's archive, extracted by GNU tar.
mkdir "$E2E_TMP/xz" && tar -xJf "$D/$A91" -C "$E2E_TMP/xz"
python3 - "$D/$SC" "$E2E_TMP/xz/$TOP" <<'PY' || fail "sidecar and original differ"
import hashlib, json, os, sys
s = json.load(open(sys.argv[1])); top = sys.argv[2]
files = [e for e in s["entries"] if e["kind"] == "file"]
assert files, "no files in the sidecar"
for e in s["entries"]:
    p = os.path.join(top, e["path"])
    if e["kind"] == "file":
        assert hashlib.sha256(open(p, "rb").read()).hexdigest() == e["sha256"], e["path"]
        assert os.path.getsize(p) == e["size"], e["path"]
    elif e["kind"] == "symlink":
        assert os.readlink(p) == e["target"], e["path"]
n = sum(len(fs) + len([d for d in ds if os.path.islink(os.path.join(r, d))]) for r, ds, fs in os.walk(top))
assert n == len([e for e in s["entries"] if e["kind"] != "dir"]), (n, len(s["entries"]))
PY
# zstd's own CLI reads the repack, and it holds the same tree as the original.
mkdir "$E2E_TMP/zst" && zstd -q -dc "$D/$Z91" | tar -xf - -C "$E2E_TMP/zst"
diff -r --no-dereference "$E2E_TMP/xz" "$E2E_TMP/zst" || fail "the repack's tree differs from the original's"

TEST "second --repack run keeps the repack (present), rewrites nothing"
tree_snapshot "$D" >"$E2E_TMP/d.before"
expect_exit 0 cudnnctl --root "$R0" --mirror "$SRC" --platform linux-x86_64 --cuda 12 --json \
  mirror 9.1.0 --to "$D" --repack zstd
expect_json 'd["changed"]' false
expect_json 'd["data"]["repacked"]' 0
expect_json 'd["data"]["releases"][0]["archives"][0]["repack"]["state"]' present
tree_snapshot "$D" >"$E2E_TMP/d.after"
cmp "$E2E_TMP/d.before" "$E2E_TMP/d.after" || fail "second run changed DIR"

start_nginx "$D"
SITE=$MIRROR_URL
SITE_LOG=$NGINX_DIR/access.log

TEST "install streams the pinned repack, checks every file, says so in --json and history"
R1=$(host_root "$D/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$R1" --mirror "$SITE" --require-pin --cuda 12 --json install 9.1.0
expect_json 'd["active"]["version"]' 9.1.0.70
expect_json 'd["data"]["archive"]["form"]' repack
expect_json '"pins its sidecar" in d["data"]["archive"]["form_reason"]' true
expect_json 'd["data"]["archive"]["sha256"]' "$SHA91"
expect_json 'd["data"]["archive"]["repack"]["sha256"]' "$(sidecar_get 's["repack"]["sha256"]')"
expect_json 'd["data"]["archive"]["repack"]["url"]' "$SITE/$Z91"
expect_json 'any("repack" in w for w in d["warnings"])' false
grep -F "GET /$Z91 " "$SITE_LOG" | grep -q '" 200 ' || fail "the repack was not downloaded"
grep -qF "GET /$A91 " "$SITE_LOG" && fail "the original was downloaded too"
ZSHA=$(sidecar_get 's["repack"]["sha256"]')
expect_file "$R1/var/cache/cudnnctl/$ZSHA.tar.zst"
expect_eq "$(find "$R1/var/cache/cudnnctl" -name '*.tar.xz' | wc -l)" 0 "xz in the cache"
expect_exit 0 cudnnctl --root "$R1" --json history
expect_json '[r.get("archive_form") for r in d["data"]["history"] if r["command"] == "install"][-1]' repack
expect_exit 0 cudnnctl --root "$R1" --json verify

TEST "unpinned sidecar: the original xz, no request for the sidecar, same files"
grep -v cudnnctl-repack "$D/cudnnctl-pins.sha256" >"$E2E_TMP/manifest-only.sha256"
R2=$(host_root "$E2E_TMP/manifest-only.sha256")
before=$(wc -l <"$SITE_LOG")
expect_exit 0 cudnnctl --root "$R2" --mirror "$SITE" --require-pin --cuda 12 --json install 9.1.0
expect_json 'd["data"]["archive"]["form"]' xz
expect_json 'd["data"]["archive"]["form_reason"]' "no site pin names a repack of this archive"
expect_json 'any("repack" in w for w in d["warnings"])' false
tail -n +"$((before + 1))" "$SITE_LOG" | grep -q cudnnctl-repack && fail "an unpinned sidecar was fetched"
expect_eq "$(installed_sums "$R2")" "$(installed_sums "$R1")" "files from the repack and from the xz"
expect_exit 0 cudnnctl --root "$R2" --json history
expect_json '[r.get("archive_form") for r in d["data"]["history"] if r["command"] == "install"][-1]' xz

TEST "a sidecar that does not match its pin: warning, the original xz"
copy_site sidecar-changed
sed -i 's/"zstd_level":3/"zstd_level":4/' "$E2E_TMP/sidecar-changed/$SC"
cmp -s "$D/$SC" "$E2E_TMP/sidecar-changed/$SC" && fail "the sidecar did not change"
R3=$(host_root "$D/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$R3" --mirror "$MIRROR_URL" --require-pin --cuda 12 --json install 9.1.0
expect_json 'd["data"]["archive"]["form"]' xz
expect_json '"the site pin" in d["data"]["archive"]["form_reason"]' true
expect_json 'any("instead of the mirror" in w and "site pin" in w for w in d["warnings"])' true
grep -qF "GET /$Z91 " "$NGINX_DIR/access.log" && fail "the repack was downloaded behind a bad sidecar"
expect_eq "$(installed_sums "$R3")" "$(installed_sums "$R2")"

TEST "changed repack bytes: sha256 mismatch, warning, the original xz, nothing cached"
copy_site bytes-changed
size=$(stat -c %s "$E2E_TMP/bytes-changed/$Z91")
flip_byte "$E2E_TMP/bytes-changed/$Z91" $((size / 2))
R4=$(host_root "$D/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$R4" --mirror "$MIRROR_URL" --require-pin --cuda 12 --json install 9.1.0
expect_json 'd["data"]["archive"]["form"]' xz
expect_json '"the repack was refused" in d["data"]["archive"]["form_reason"]' true
expect_json '"sha256" in d["data"]["archive"]["form_reason"]' true
expect_json 'any("instead of the mirror" in w for w in d["warnings"])' true
expect_eq "$(find "$R4/var/cache/cudnnctl" -name '*.tar.zst' | wc -l)" 0 "bad repack cached"
expect_file "$R4/var/cache/cudnnctl/$SHA91.tar.xz"
expect_eq "$(installed_sums "$R4")" "$(installed_sums "$R2")"
expect_exit 0 cudnnctl --root "$R4" --json verify

TEST "a pinned sidecar that lies about one file: the per-file check refuses the repack"
copy_site sidecar-lies
python3 - "$E2E_TMP/sidecar-lies/$SC" <<'PY'
import sys
p = sys.argv[1]; lines = open(p).read().split("\n")
i = next(i for i, l in enumerate(lines) if '"kind":"file"' in l and "libcudnn.so.9." in l)
import re
lines[i] = re.sub(r'"sha256":"[0-9a-f]{64}"', '"sha256":"' + "0" * 64 + '"', lines[i])
open(p, "w").write("\n".join(lines))
PY
{ grep -v cudnnctl-repack "$D/cudnnctl-pins.sha256"
  echo "$(sha256sum "$E2E_TMP/sidecar-lies/$SC" | cut -d' ' -f1)  $SC"; } >"$E2E_TMP/lies.sha256"
R5=$(host_root "$E2E_TMP/lies.sha256")
expect_exit 0 cudnnctl --root "$R5" --mirror "$MIRROR_URL" --require-pin --cuda 12 --json install 9.1.0
expect_json 'd["data"]["archive"]["form"]' xz
expect_json '"differs from its sidecar" in d["data"]["archive"]["form_reason"]' true
expect_json '"libcudnn.so.9." in d["data"]["archive"]["form_reason"]' true
grep -F "GET /$Z91 " "$NGINX_DIR/access.log" | grep -q '" 200 ' || fail "the repack was not tried"
expect_eq "$(installed_sums "$R5")" "$(installed_sums "$R2")"
expect_eq "$(find "$R5/opt/cudnn/store" -maxdepth 1 -name '.staging-*' | wc -l)" 0 "staging left"

TEST "hostile entries in a pinned repack: refused, the original xz, nothing outside the tree"
copy_site hostile
H=$E2E_TMP/hostile
python3 - "$E2E_TMP/xz" "$TOP" "$H/hostile.tar" <<'PY'
import io, sys, tarfile
src, top, out = sys.argv[1:]
with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
    t.add(f"{src}/{top}", arcname=top)
    data = b"escaped\n"
    ti = tarfile.TarInfo(f"{top}/../../escaped-by-repack"); ti.size = len(data)
    t.addfile(ti, io.BytesIO(data))
PY
zstd -q -3 --rm -f "$H/hostile.tar" -o "$H/$Z91"
python3 - "$H/$SC" "$H/$Z91" <<'PY'
import hashlib, json, os, sys
p, z = sys.argv[1:]
s = json.load(open(p))
s["repack"]["sha256"] = hashlib.sha256(open(z, "rb").read()).hexdigest()
s["repack"]["size"] = os.path.getsize(z)
open(p, "w").write(json.dumps(s))
PY
{ grep -v cudnnctl-repack "$D/cudnnctl-pins.sha256"
  echo "$(sha256sum "$H/$SC" | cut -d' ' -f1)  $SC"; } >"$E2E_TMP/hostile.sha256"
R6=$(host_root "$E2E_TMP/hostile.sha256")
expect_exit 0 cudnnctl --root "$R6" --mirror "$MIRROR_URL" --require-pin --cuda 12 --json install 9.1.0
expect_json 'd["data"]["archive"]["form"]' xz
expect_json '"unsafe archive entry" in d["data"]["archive"]["form_reason"]' true
expect_json 'any("instead of the mirror" in w for w in d["warnings"])' true
expect_eq "$(find "$E2E_TMP" -name escaped-by-repack | wc -l)" 0 "a hostile entry was written"
expect_eq "$(installed_sums "$R6")" "$(installed_sums "$R2")"

TEST "a pinned sidecar the mirror lacks, a sidecar whose repack is gone: warning, the original xz"
copy_site no-sidecar
rm "$E2E_TMP/no-sidecar/$SC"
R7=$(host_root "$D/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$R7" --mirror "$MIRROR_URL" --require-pin --cuda 12 --json install 9.1.0
expect_json 'd["data"]["archive"]["form"]' xz
expect_json '"no usable repack sidecar" in d["data"]["archive"]["form_reason"]' true
expect_json 'any("instead of the mirror" in w for w in d["warnings"])' true
copy_site no-repack
rm "$E2E_TMP/no-repack/$Z91"
R8=$(host_root "$D/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$R8" --mirror "$MIRROR_URL" --require-pin --cuda 12 --json install 9.1.0
expect_json 'd["data"]["archive"]["form"]' xz
expect_json '"the repack was refused" in d["data"]["archive"]["form_reason"]' true
expect_json 'any("instead of the mirror" in w for w in d["warnings"])' true
expect_eq "$(installed_sums "$R8")" "$(installed_sums "$R2")"

TEST "mirror --repack sweeps what a killed run left and writes the repack again"
L=$E2E_TMP/leftovers
cp -a "$D" "$L"
rm "$L/$Z91"
mkdir -p "$L/.cudnnctl/repack.tmp.dead/lib"
echo half >"$L/.cudnnctl/repack.tmp.dead/lib/x"
mkdir -p "$L/.cudnnctl/tmp" && echo half >"$L/.cudnnctl/tmp/.$(basename "$Z91").tmp.dead"
expect_exit 0 cudnnctl --root "$R0" --mirror "$SRC" --platform linux-x86_64 --cuda 12 --json \
  mirror 9.1.0 --to "$L" --repack zstd
expect_json 'd["data"]["repacked"]' 1
expect_json 'any("is not usable" in w for w in d["warnings"])' true
expect_eq "$(find "$L" -name '*.tmp.*' -o -name 'repack.tmp.*' | wc -l)" 0 "leftovers"
cmp "$L/$Z91" "$D/$Z91" || fail "the repack written again differs (the same archive and level)"
cmp "$L/$SC" "$D/$SC" || fail "the sidecar written again differs"

TEST "bad --repack format: exit 2, nothing written"
expect_exit 2 cudnnctl --root "$R0" --mirror "$SRC" --cuda 12 --json mirror 9.1.0 --to "$E2E_TMP/new1" --repack xz
expect_json '"unknown --repack format" in d["error"]["message"]' true
expect_no_file "$E2E_TMP/new1"

TEST "--dry-run --repack says what it would write, writes nothing"
expect_exit 0 cudnnctl --root "$R0" --mirror "$SRC" --platform linux-x86_64 --cuda 12 --json --dry-run \
  mirror 9.1.0 --to "$E2E_TMP/new2" --repack zstd
expect_json 'd["data"]["repacked"]' 1
expect_json 'd["data"]["releases"][0]["archives"][0]["repack"]["state"]' "would write"
expect_no_file "$E2E_TMP/new2"
