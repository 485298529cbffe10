# SPDX-License-Identifier: Apache-2.0
# `cudnnctl mirror VERSION... --to DIR`: a directory laid out like NVIDIA's redist server,
# served by nginx with scripts/nginx-mirror.conf, installed from by a fresh root that trusts
# only the pins the mirror wrote. Idempotence is checked on the source server's access log.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl

REPO=$(cd "$E2E_DIR/../.." && pwd)
M=$(std_mirror)
start_nginx "$M"
SRC=$MIRROR_URL
SRC_LOG=$NGINX_DIR/access.log
R0=$(new_root) # the mirroring host's root: mirror writes nothing under it
D=$E2E_TMP/mirror-out
A91=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
A91_11=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda11-archive.tar.xz
A897=cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz

export LC_ALL=C
log_lines() { wc -l <"$1"; }
# new_requests LOG FROM: the access-log lines after line FROM.
new_requests() { tail -n +"$(($2 + 1))" "$1"; }

TEST "mirror two releases: manifests byte for byte, archives verified, pins"
tree_snapshot "$R0" >"$E2E_TMP/r0.before"
expect_exit 0 cudnnctl --root "$R0" --mirror "$SRC" --platform linux-x86_64 --json \
  mirror 9.1.0 8.9.7 --to "$D"
expect_json 'd["ok"]' true
expect_json 'd["changed"]' true
expect_json 'd["data"]["downloaded"]' 4 # CUDA 11 and 12 of each: every variant by default
expect_json 'd["data"]["present"]' 0
expect_json '[r["label"] for r in d["data"]["releases"]]' '["9.1.0", "8.9.7"]'
expect_json '[r["pin"] for r in d["data"]["releases"]]' '["none", "none"]'
expect_json 'any("not pinned" in w for w in d["warnings"])' true
for f in redistrib_9.1.0.json redistrib_8.9.7.json "$A91" "$A91_11" "$A897"; do
  cmp "$M/$f" "$D/$f" || fail "$D/$f differs from the source's $f"
done
expect_no_file "$D/redistrib_9.27.0.json"
expect_no_file "$D/cudnn/linux-sbsa"
# The pins are exactly the source's sha256 lines for what was mirrored.
grep -E ' (redistrib_9\.1\.0|redistrib_8\.9\.7)\.json$' "$M/SHA256SUMS" | sort >"$E2E_TMP/want.pins"
grep -v '^#' "$D/cudnnctl-pins.sha256" | sort >"$E2E_TMP/got.pins"
cmp "$E2E_TMP/want.pins" "$E2E_TMP/got.pins" || fail "pins differ: $(diff "$E2E_TMP/want.pins" "$E2E_TMP/got.pins")"
# Nothing but the mirror layout, the pins file and the hidden work directory in DIR.
(cd "$D" && find . -type f ! -path './.cudnnctl/*' | sort) >"$E2E_TMP/files"
expect_eq "$(cat "$E2E_TMP/files" | tr '\n' ' ')" \
  "./cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda11-archive.tar.xz ./$A897 ./$A91_11 ./$A91 ./cudnnctl-pins.sha256 ./redistrib_8.9.7.json ./redistrib_9.1.0.json "
expect_eq "$(find "$D/.cudnnctl" -type f -name '*.partial' | wc -l)" 0 "partial files left"
tree_snapshot "$R0" >"$E2E_TMP/r0.after"
cmp "$E2E_TMP/r0.before" "$E2E_TMP/r0.after" || fail "mirror wrote under --root"

TEST "second run downloads nothing and rewrites nothing"
tree_snapshot "$D" >"$E2E_TMP/d.before"
before=$(log_lines "$SRC_LOG")
stat -c %Y "$D/redistrib_9.1.0.json" >"$E2E_TMP/mtime.before"
sleep 1.1
expect_exit 0 cudnnctl --root "$R0" --mirror "$SRC" --platform linux-x86_64 --json \
  mirror 9.1.0 8.9.7 --to "$D"
expect_json 'd["changed"]' false
expect_json 'd["data"]["downloaded"]' 0
expect_json 'd["data"]["present"]' 4
expect_json 'd["actions"]' '[]'
new_requests "$SRC_LOG" "$before" >"$E2E_TMP/requests"
expect_eq "$(grep -c 'tar.xz' "$E2E_TMP/requests" || true)" 0 "archive requests on the second run"
expect_eq "$(grep -c 'GET /redistrib_' "$E2E_TMP/requests" || true)" 2 "manifest requests"
tree_snapshot "$D" >"$E2E_TMP/d.after"
cmp "$E2E_TMP/d.before" "$E2E_TMP/d.after" || fail "second run changed DIR"
expect_eq "$(stat -c %Y "$D/redistrib_9.1.0.json")" "$(cat "$E2E_TMP/mtime.before")" "manifest rewritten"

TEST "a damaged archive in DIR is replaced; a partial download is resumed (206)"
cp "$D/$A91" "$E2E_TMP/good.tar.xz"
printf '\xff' | dd of="$D/$A91" bs=1 seek=100 conv=notrunc status=none
sha=$(sha256sum "$M/$A897" | cut -d' ' -f1)
size=$(stat -c %s "$M/$A897")
mkdir -p "$D/.cudnnctl/partial"
head -c $((size / 2)) "$M/$A897" >"$D/.cudnnctl/partial/$sha.partial"
rm "$D/$A897"
before=$(log_lines "$SRC_LOG")
expect_exit 0 cudnnctl --root "$R0" --mirror "$SRC" --platform linux-x86_64 --json \
  mirror 9.1.0 8.9.7 --to "$D"
expect_json 'd["data"]["downloaded"]' 2
expect_json 'd["data"]["present"]' 2
expect_json 'any("does not match the manifest" in w for w in d["warnings"])' true
cmp "$D/$A91" "$E2E_TMP/good.tar.xz" || fail "damaged archive not replaced"
cmp "$D/$A897" "$M/$A897" || fail "resumed archive differs"
new_requests "$SRC_LOG" "$before" >"$E2E_TMP/requests"
grep -F "GET /$A897" "$E2E_TMP/requests" | grep -q '" 206 ' || fail "no 206 (Range) request for the partial: $(cat "$E2E_TMP/requests")"

TEST "serve DIR with scripts/nginx-mirror.conf; a fresh root installs with --require-pin"
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
nd=$E2E_TMP/nginx-example
mkdir -p "$nd"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -e "s|listen 80;|listen 127.0.0.1:$port;|" -e '/listen \[::\]:80;/d' \
  -e "s|root /srv/cudnn-mirror;|root $D;|" "$REPO/scripts/nginx-mirror.conf" >"$nd/site.conf"
nginx_conf "$nd" <<EOF
    include /etc/nginx/mime.types;
    include $nd/site.conf;
EOF
expect_exit 0 "$nginx_bin" -t -p "$nd" -c "$nd/nginx.conf" -e "$nd/error.log"
"$nginx_bin" -p "$nd" -c "$nd/nginx.conf" -e "$nd/error.log" </dev/null >"$nd/stdout" 2>&1 &
_E2E_NGINX_PIDS+=("$!")
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
OUT_URL=http://127.0.0.1:$port/
expect_exit 0 curl -fsS -o /dev/null "${OUT_URL}redistrib_9.1.0.json"
expect_exit 22 curl -fsS -o /dev/null "${OUT_URL}.cudnnctl/lock"
expect_exit 0 curl -fsS -o /dev/null -r 0-99 "${OUT_URL}$A91"
R1=$(new_root)
mkdir -p "$R1/etc/cudnnctl/pins.d"
cp "$D/cudnnctl-pins.sha256" "$R1/etc/cudnnctl/pins.d/"
expect_exit 0 cudnnctl --root "$R1" --mirror "$OUT_URL" --require-pin --cuda 12 --json install 9.1.0
expect_json 'd["active"]["version"]' 9.1.0.70
expect_json 'd["data"]["archive"]["url"]' "${OUT_URL}$A91"
expect_json 'any("not pinned" in w for w in d["warnings"])' false
R2=$(new_root) # the same without the pins: refused
expect_exit 4 cudnnctl --root "$R2" --mirror "$OUT_URL" --require-pin --cuda 12 --json install 9.1.0
expect_json 'd["error"]["code"]' integrity
expect_json '"not pinned" in d["error"]["message"]' true

TEST "a manifest that contradicts its pin is refused (exit 4); DIR stays as it was"
T=$E2E_TMP/tampered
cp -a "$M" "$T"
sed -i 's/"release_date": "2024-04-12"/"release_date": "2024-04-13"/' "$T/redistrib_9.1.0.json"
cmp -s "$M/redistrib_9.1.0.json" "$T/redistrib_9.1.0.json" && fail "tampering did not change the manifest"
start_nginx "$T"
TAMPERED=$MIRROR_URL
tree_snapshot "$D" >"$E2E_TMP/d.before"
# DIR's own pins file pins 9.1.0 now: the changed upstream manifest is refused.
expect_exit 4 cudnnctl --root "$R0" --mirror "$TAMPERED" --platform linux-x86_64 --json mirror 9.1.0 --to "$D"
expect_json 'd["error"]["code"]' integrity
expect_json '"does not match its pin" in d["error"]["message"]' true
expect_json '"cudnnctl-pins.sha256" in d["error"]["message"]' true
tree_snapshot "$D" >"$E2E_TMP/d.after"
cmp "$E2E_TMP/d.before" "$E2E_TMP/d.after" || fail "refused mirror changed DIR"
# A site pin under --root is checked the same way, into a new directory: nothing is created.
R3=$(new_root)
mkdir -p "$R3/etc/cudnnctl/pins.d"
grep ' redistrib_9.1.0.json$' "$M/SHA256SUMS" >"$R3/etc/cudnnctl/pins.d/site.sha256"
expect_exit 4 cudnnctl --root "$R3" --mirror "$TAMPERED" --json mirror 9.1.0 --to "$E2E_TMP/new1"
expect_no_file "$E2E_TMP/new1"
# The untampered source with the same pin: pin "site".
expect_exit 0 cudnnctl --root "$R3" --mirror "$SRC" --cuda 12 --json mirror 9.1.0 --to "$E2E_TMP/new2"
expect_json 'd["data"]["releases"][0]["pin"]' site
expect_json 'd["data"]["downloaded"]' 1

TEST "a corrupted archive at the source fails with exit 4 and leaves no file"
printf '\x00' | dd of="$T/$A897" bs=1 seek=200 conv=notrunc status=none
cp "$M/redistrib_9.1.0.json" "$T/redistrib_9.1.0.json"
expect_exit 4 cudnnctl --root "$R0" --mirror "$TAMPERED" --cuda 12 --json mirror 8.9.7 --to "$E2E_TMP/new3"
expect_json 'd["error"]["code"]' integrity
expect_json '"sha256" in d["error"]["message"]' true
expect_no_file "$E2E_TMP/new3/$A897"
expect_no_file "$E2E_TMP/new3/redistrib_8.9.7.json"
expect_eq "$(find "$E2E_TMP/new3" -type f -name '*.partial' | wc -l)" 0 "partial left after a mismatch"

TEST "--dry-run writes nothing; --platform all; usage errors"
expect_exit 0 cudnnctl --root "$R0" --mirror "$SRC" --platform all --json --dry-run mirror 9.27.0 --to "$E2E_TMP/new4"
expect_json 'd["changed"]' true
expect_json 'd["data"]["downloaded"]' 4 # x86_64 and sbsa, CUDA 12 and 13
expect_json 'sorted(set(a["platform"] for a in d["data"]["releases"][0]["archives"]))' '["linux-sbsa", "linux-x86_64"]'
expect_json 'all(a["state"] == "would download" for a in d["data"]["releases"][0]["archives"])' true
expect_no_file "$E2E_TMP/new4"
expect_exit 2 cudnnctl --root "$R0" --mirror "$SRC" --json mirror 9.9.9 --to "$E2E_TMP/new5"
expect_json '"unknown cuDNN version 9.9.9" in d["error"]["message"]' true
expect_no_file "$E2E_TMP/new5"
expect_exit 2 cudnnctl --root "$R0" --mirror "$SRC" --cuda 13 --json mirror 9.1.0 --to "$E2E_TMP/new5"
expect_json '"CUDA 11, 12" in d["error"]["message"]' true
expect_exit 2 cudnnctl --root "$R0" --manifest "$M/redistrib_9.1.0.json" --json mirror 9.1.0 --to "$E2E_TMP/new5"
expect_exit 2 cudnnctl --root "$R0" --platform windows-x86_64 --json mirror 9.1.0 --to "$E2E_TMP/new5"
expect_exit 2 cudnnctl --root "$R0" --json mirror 9.1.0
expect_no_file "$E2E_TMP/new5"
