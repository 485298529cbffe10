# SPDX-License-Identifier: Apache-2.0
# `mirror --repack zstd` and installs from the repack: the site mirror decompresses NVIDIA's
# xz once; hosts stream its .tar.zst only when a site pin names the sidecar, and check every
# extracted file against the sidecar. Every refusal falls back to the original xz with a
# warning. Real nginx on loopback, real archives (mkmirror), real zstd.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl
source "$E2E_DIR/repack_lib.bash"

R0=$(new_root)
TOP=$(basename "$A91" .tar.xz)
export LC_ALL=C

# sidecar_get EXPR [FILE]: a value of the sidecar (python expression over s).
sidecar_get() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "${2:-$D/$SC}" "$1"; }
# repinned_root SIDECAR [NAME [PINS]]: a fresh root trusting PINS (default the site's) with its
# sidecar line replaced by SIDECAR's sha256 under NAME (default $SC): a changed sidecar that the
# site vouches for.
repinned_root() {
  local pins=$E2E_TMP/repinned.$RANDOM.sha256
  { grep -v cudnnctl-repack "${3:-$D/cudnnctl-pins.sha256}"
    echo "$(sha256sum "$1" | cut -d' ' -f1)  ${2:-$SC}"; } >"$pins"
  host_root "$pins"
}
# installed_sums ROOT: sha256 of every file the active entry holds, by path.
installed_sums() { (cd "$1/opt/cudnn/current/" && find -L . -type f ! -name '.cudnnctl-entry.json' -exec sha256sum {} + | sort -k2); }
# install_xz ROOT VERSION REASON...: install VERSION on ROOT from $MIRROR_URL with --require-pin
# (exit 0, --json): NVIDIA's xz, not the repack, with each REASON (a python expression, e.g.
# '"sha256"') in the form's reason.
install_xz() {
  local r=$1 v=$2 reason
  shift 2
  expect_exit 0 cudnnctl --root "$r" --mirror "$MIRROR_URL" --require-pin --cuda 12 --json install "$v"
  expect_json 'd["data"]["archive"]["form"]' xz
  for reason in "$@"; do
    expect_json "$reason in d[\"data\"][\"archive\"][\"form_reason\"]" true
  done
}
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
# And the digest of every MiB of the repack and of every file larger than that.
python3 - "$D/$SC" "$E2E_TMP/xz/$TOP" "$D/$Z91" <<'PY' || fail "the sidecar's chunk digests are wrong"
import hashlib, json, os, sys
s = json.load(open(sys.argv[1])); top = sys.argv[2]; C = 1 << 20
assert s["chunk_bytes"] == C, s.get("chunk_bytes")
def chunks(p):
    b = open(p, "rb").read()
    return [hashlib.sha256(b[i:i + C]).hexdigest() for i in range(0, len(b), C)]
assert s["repack"]["chunks"] == chunks(sys.argv[3])
for e in s["entries"]:
    if e["kind"] == "file":
        want = chunks(os.path.join(top, e["path"])) if e["size"] > C else None
        assert e.get("chunks") == want, e["path"]
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
# The GPU child loaded the probe's libraries as the pass verified them (the shim last, once the
# others were in), and the probe after the pass was the same child's (-vv says both).
R1V=$(host_root "$D/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$R1V" --mirror "$SITE" --require-pin --cuda 12 -vv install 9.1.0
grep -qF "runtime probe: the GPU child loaded 8 of its 8 libraries as the pass verified them against the sidecar" "$ERR" ||
  fail "no early loads: $(grep -F 'runtime probe' "$ERR")"
grep -qF "runtime probe: in a child of its own" "$ERR" && fail "the GPU child declined the probe"

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
install_xz "$R3" 9.1.0 '"the site pin"'
expect_json 'any("instead of the mirror" in w and "site pin" in w for w in d["warnings"])' true
grep -qF "GET /$Z91 " "$NGINX_DIR/access.log" && fail "the repack was downloaded behind a bad sidecar"
expect_eq "$(installed_sums "$R3")" "$(installed_sums "$R2")"

TEST "changed repack bytes: sha256 mismatch, warning, the original xz, nothing cached"
copy_site bytes-changed
size=$(stat -c %s "$E2E_TMP/bytes-changed/$Z91")
flip_byte "$E2E_TMP/bytes-changed/$Z91" $((size / 2))
R4=$(host_root "$D/cudnnctl-pins.sha256")
install_xz "$R4" 9.1.0 '"the repack was refused"' '"sha256"'
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
R5=$(repinned_root "$E2E_TMP/sidecar-lies/$SC")
install_xz "$R5" 9.1.0 '"differs from its sidecar"' '"libcudnn.so.9."'
grep -F "GET /$Z91 " "$NGINX_DIR/access.log" | grep -q '" 200 ' || fail "the repack was not tried"
expect_eq "$(installed_sums "$R5")" "$(installed_sums "$R2")"
expect_eq "$(find "$R5/opt/cudnn/store" -maxdepth 1 -name '.staging-*' | wc -l)" 0 "staging left"
# The file that differs from its sidecar (the shim) was never loaded: the others were. The child
# that loaded the refused tree's libraries does not probe the xz's tree.
R5V=$(repinned_root "$E2E_TMP/sidecar-lies/$SC")
expect_exit 0 cudnnctl --root "$R5V" --mirror "$MIRROR_URL" --require-pin --cuda 12 -vv install 9.1.0
grep -qF "the GPU child loaded 7 of its 8 libraries as the pass verified them" "$ERR" ||
  fail "early loads: $(grep -F 'GPU child loaded' "$ERR")"
grep -qF "runtime probe: in a child of its own (the waiting GPU child declined: it loaded files of a tree that was discarded" "$ERR" ||
  fail "the GPU child probed the xz's tree: $(grep -F 'runtime probe' "$ERR")"

TEST "a pinned sidecar whose chunk digest of the repack lies: refused, the original xz"
copy_site chunk-lies
python3 - "$E2E_TMP/chunk-lies/$SC" <<'PY'
import json, sys
p = sys.argv[1]; s = json.load(open(p))
s["repack"]["chunks"][-1] = "0" * 64  # the whole sha256 stays right: the chunks are checked
open(p, "w").write(json.dumps(s))
PY
R7=$(repinned_root "$E2E_TMP/chunk-lies/$SC")
install_xz "$R7" 9.1.0 '"sha256 mismatch"' '"expected " + "0" * 64'
expect_json 'any("instead of the mirror" in w for w in d["warnings"])' true
expect_eq "$(find "$R7/var/cache/cudnnctl" -name '*.tar.zst' | wc -l)" 0 "repack cached"
expect_eq "$(installed_sums "$R7")" "$(installed_sums "$R2")"

TEST "an older mirror's sidecar without chunk digests: the repack, checked by whole digests"
copy_site no-chunks
python3 - "$E2E_TMP/no-chunks/$SC" <<'PY'
import json, sys
p = sys.argv[1]; s = json.load(open(p))
s.pop("chunk_bytes"); s["repack"].pop("chunks")
for e in s["entries"]:
    e.pop("chunks", None)
open(p, "w").write(json.dumps(s))
PY
R8=$(repinned_root "$E2E_TMP/no-chunks/$SC")
expect_exit 0 cudnnctl --root "$R8" --mirror "$MIRROR_URL" --require-pin --cuda 12 -v install 9.1.0
cat "$OUT" "$ERR" >"$E2E_TMP/no-chunks.out"
expect_contains "$E2E_TMP/no-chunks.out" "lists no chunk digests"
expect_contains "$E2E_TMP/no-chunks.out" "(size and sha256 match its pinned sidecar)"
expect_exit 0 cudnnctl --root "$R8" --json history
expect_json '[r.get("archive_form") for r in d["data"]["history"] if r["command"] == "install"][-1]' repack
expect_eq "$(installed_sums "$R8")" "$(installed_sums "$R2")"
expect_exit 0 cudnnctl --root "$R8" --json verify

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
b = open(z, "rb").read()
s["repack"]["sha256"] = hashlib.sha256(b).hexdigest()
s["repack"]["size"] = len(b)
s["repack"]["chunks"] = [hashlib.sha256(b[i:i + (1 << 20)]).hexdigest() for i in range(0, len(b), 1 << 20)]
open(p, "w").write(json.dumps(s))
PY
R6=$(repinned_root "$H/$SC")
install_xz "$R6" 9.1.0 '"unsafe archive entry"'
expect_json 'any("instead of the mirror" in w for w in d["warnings"])' true
expect_eq "$(find "$E2E_TMP" -name escaped-by-repack | wc -l)" 0 "a hostile entry was written"
expect_eq "$(installed_sums "$R6")" "$(installed_sums "$R2")"

TEST "a pinned sidecar the mirror lacks, a sidecar whose repack is gone: warning, the original xz"
copy_site no-sidecar
rm "$E2E_TMP/no-sidecar/$SC"
R7=$(host_root "$D/cudnnctl-pins.sha256")
install_xz "$R7" 9.1.0 '"no usable repack sidecar"'
expect_json 'any("instead of the mirror" in w for w in d["warnings"])' true
copy_site no-repack
rm "$E2E_TMP/no-repack/$Z91"
R8=$(host_root "$D/cudnnctl-pins.sha256")
install_xz "$R8" 9.1.0 '"the repack was refused"'
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

TEST "a file larger than a chunk is checked chunk by chunk; a lying chunk sends the host to the xz"
P=$E2E_TMP/padded
mkrelease --mirror "$P" --label 9.11.0 --version 9.11.0.98 --cuda 12 --platform linux-x86_64 \
  --no-static --pad libcudnn_engines_precompiled=8000000 --pad-random >/dev/null
start_nginx "$P"
expect_exit 0 cudnnctl --root "$R0" --mirror "$MIRROR_URL" --platform linux-x86_64 --cuda 12 --json \
  mirror 9.11.0 --to "$E2E_TMP/psite" --repack zstd
PSC=$(cd "$E2E_TMP/psite" && ls cudnnctl-repack/*.json)
BIG=$(sidecar_get '[e["path"] for e in s["entries"] if len(e.get("chunks", [])) >= 3][0]' "$E2E_TMP/psite/$PSC")
expect_eq "$BIG" "$(sidecar_get '[e["path"] for e in s["entries"] if e.get("size", 0) > 1 << 20][0]' "$E2E_TMP/psite/$PSC")"
start_nginx "$E2E_TMP/psite"
R9=$(host_root "$E2E_TMP/psite/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$R9" --mirror "$MIRROR_URL" --require-pin --cuda 12 --json install 9.11.0
expect_json 'd["data"]["archive"]["form"]' repack
# The entry records the file's whole sha256 (the sidecar's, every chunk matched): verify agrees.
expect_exit 0 cudnnctl --root "$R9" --json verify
cp -a "$E2E_TMP/psite" "$E2E_TMP/psite-lies"
python3 - "$E2E_TMP/psite-lies/$PSC" "$BIG" <<'PY'
import json, sys
p, big = sys.argv[1:]; s = json.load(open(p))
e = next(e for e in s["entries"] if e["path"] == big)
e["chunks"][1] = "0" * 64  # its whole sha256 stays right: the chunks are what a host checks
open(p, "w").write(json.dumps(s))
PY
start_nginx "$E2E_TMP/psite-lies"
R10=$(repinned_root "$E2E_TMP/psite-lies/$PSC" "$PSC" "$E2E_TMP/psite/cudnnctl-pins.sha256")
install_xz "$R10" 9.11.0 '"'"$BIG"' differs from its sidecar: bytes 1048576 to 2097152 have sha256"'
expect_json 'any("instead of the mirror" in w for w in d["warnings"])' true
expect_eq "$(installed_sums "$R10")" "$(installed_sums "$R9")"

TEST "a repack download that starts again from byte 0: the early loads are abandoned, the tree probed anew"
# The padded release's repack has several zstd frames: the first pass extracts, and the GPU
# child loads, the libraries before the padded one; the cut 200 kB before the end then sends the
# download back to byte 0 (Range ignored), and the second pass's tree is probed by a child of
# its own.
start_faultserver "$E2E_TMP/psite"
PZ=$(cd "$E2E_TMP/psite" && ls cudnn/linux-x86_64/*.tar.zst)
ZSIZE=$(stat -c %s "$E2E_TMP/psite/$PZ")
RR=$(host_root "$E2E_TMP/psite/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$RR" --mirror "$FS_URL/fault/cut-once=$((ZSIZE - 200000)),ignore-range" \
  --require-pin --cuda 12 -vv install 9.11.0 --no-smoke
expect_contains "$ERR" "extracting again"
early=$(grep -oP 'the GPU child loaded \K[0-9]+(?= of its 8 libraries)' "$ERR") ||
  fail "no early-load line: $(grep -F 'runtime probe' "$ERR")"
[ "$early" -gt 0 ] || fail "nothing was loaded before the cut: $(grep -F 'runtime probe' "$ERR")"
grep -qF "runtime probe: in a child of its own (the waiting GPU child declined: it loaded files of a tree that was discarded" "$ERR" ||
  fail "$early early loads, then the same child probed: $(grep -F 'runtime probe' "$ERR")"
expect_contains "$ERR" "8 libraries loaded by absolute path"
expect_eq "$(installed_sums "$RR")" "$(installed_sums "$R9")"

