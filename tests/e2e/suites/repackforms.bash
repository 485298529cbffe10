# SPDX-License-Identifier: Apache-2.0
# The other ways a host meets a site mirror's repack (issue 21): `install --archive
# FILE.tar.zst` (offline, through the sidecar the site pins, else refused), a second install
# from the download cache (keyed by the repack's sha256), and `install --dry-run` saying which
# form it would install and why. Real nginx on loopback, real archives (mkmirror), real zstd.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
source "$E2E_DIR/repack_lib.bash"

expect_exit 0 cudnnctl --root "$(new_root)" --mirror "$SRC" --platform linux-x86_64 --cuda 12 \
  mirror 9.1.0 --to "$D" --repack zstd
ZSHA=$(sha256sum "$D/$Z91" | cut -d' ' -f1)
grep -v cudnnctl-repack "$D/cudnnctl-pins.sha256" >"$E2E_TMP/manifest-only.sha256"
start_nginx "$D"
SITE=$MIRROR_URL
SITE_LOG=$NGINX_DIR/access.log

no_entry() { expect_eq "$(find "$1/opt/cudnn/store" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" 0 "store entries in $1"; }
installed_sums() { (cd "$1/opt/cudnn/current/" && find -L . -type f ! -name '.cudnnctl-entry.json' -exec sha256sum {} + | sort -k2); }

TEST "--dry-run: the pinned repack, and why; nothing downloaded, nothing written"
R=$(host_root "$D/cudnnctl-pins.sha256")
before=$(wc -l <"$SITE_LOG")
expect_exit 0 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json --dry-run install 9.1.0
expect_json 'd["data"]["archive"]["form"]' repack
expect_json '"pins its sidecar" in d["data"]["archive"]["form_reason"]' true
expect_json 'd["data"]["archive"]["repack"]["url"]' "$SITE/$Z91"
expect_json 'd["data"]["archive"]["repack"]["sha256"]' "$ZSHA"
expect_json 'any("would download the mirror" in a for a in d["actions"])' true
tail -n +"$((before + 1))" "$SITE_LOG" | grep -qF "GET /$Z91 " && fail "--dry-run downloaded the repack"
no_entry "$R"
expect_exit 0 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 -v --dry-run install 9.1.0
expect_contains "$OUT" "from the mirror's repack $SITE/$Z91 (the site pins its sidecar"
expect_contains "$OUT" "would install and activate cuDNN 9.1.0.70"

TEST "--dry-run without a sidecar pin: NVIDIA's xz, and why"
R=$(host_root "$E2E_TMP/manifest-only.sha256")
expect_exit 0 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json --dry-run install 9.1.0
expect_json 'd["data"]["archive"]["form"]' xz
expect_json 'd["data"]["archive"]["form_reason"]' "no site pin names a repack of this archive"
expect_exit 0 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 -v --dry-run install 9.1.0
expect_contains "$OUT" "from NVIDIA's archive $SITE/$A91 (no site pin names a repack"

TEST "a second install from the download cache, keyed by the repack's sha256: no download"
R1=$(host_root "$D/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$R1" --mirror "$SITE" --cuda 12 --json install 9.1.0
expect_json 'd["data"]["archive"]["form"]' repack
expect_file "$R1/var/cache/cudnnctl/$ZSHA.tar.zst"
expect_eq "$(ls "$R1/var/cache/cudnnctl")" "$ZSHA.tar.zst" "cache contents"
R2=$(host_root "$D/cudnnctl-pins.sha256")
mkdir -p "$R2/var/cache/cudnnctl" && cp "$R1/var/cache/cudnnctl/$ZSHA.tar.zst" "$R2/var/cache/cudnnctl/"
before=$(wc -l <"$SITE_LOG")
expect_exit 0 cudnnctl --root "$R2" --mirror "$SITE" --cuda 12 --json install 9.1.0
expect_json 'd["data"]["archive"]["form"]' repack
tail -n +"$((before + 1))" "$SITE_LOG" | grep -qF "GET /$Z91 " && fail "the cached repack was downloaded again"
expect_eq "$(installed_sums "$R2")" "$(installed_sums "$R1")"
expect_exit 0 cudnnctl --root "$R2" --json verify
# A cached repack whose bytes changed is hashed before use, dropped and downloaded again.
R3=$(host_root "$D/cudnnctl-pins.sha256")
mkdir -p "$R3/var/cache/cudnnctl" && cp "$R1/var/cache/cudnnctl/$ZSHA.tar.zst" "$R3/var/cache/cudnnctl/"
flip_byte "$R3/var/cache/cudnnctl/$ZSHA.tar.zst" 1000
before=$(wc -l <"$SITE_LOG")
expect_exit 0 cudnnctl --root "$R3" --mirror "$SITE" --cuda 12 --json install 9.1.0
expect_json 'd["data"]["archive"]["form"]' repack
tail -n +"$((before + 1))" "$SITE_LOG" | grep -F "GET /$Z91 " | grep -q '" 200 ' || fail "the bad cached repack was used"
expect_eq "$(sha256sum "$R3/var/cache/cudnnctl/$ZSHA.tar.zst" | cut -d' ' -f1)" "$ZSHA"
expect_eq "$(installed_sums "$R3")" "$(installed_sums "$R1")"

TEST "--archive FILE.tar.zst in a copy of the mirror's tree: its pinned sidecar found, installed"
R=$(host_root "$D/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json install --archive "$D/$Z91"
expect_json 'd["active"]["version"]' 9.1.0.70
expect_json 'd["data"]["archive"]["form"]' repack
expect_json '"--archive names a repack" in d["data"]["archive"]["form_reason"]' true
expect_json 'd["data"]["archive"]["repack"]["sidecar_url"]' "file://$D/$SC"
expect_json 'd["data"]["archive"]["sha256"]' "$SHA91"
expect_eq "$(installed_sums "$R")" "$(installed_sums "$R1")"
expect_exit 0 cudnnctl --root "$R" --json history
expect_json '[r.get("archive_form") for r in d["data"]["history"] if r["command"] == "install"][-1]' repack

TEST "--archive FILE.tar.zst with <sha256>.json beside it, and with --sidecar"
O=$E2E_TMP/offline
mkdir -p "$O/a" "$O/b"
cp "$D/$Z91" "$O/a/" && cp "$D/$SC" "$O/a/"
R=$(host_root "$D/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json install --archive "$O/a/$(basename "$Z91")"
expect_json 'd["data"]["archive"]["form"]' repack
expect_json 'd["data"]["archive"]["repack"]["sidecar_url"]' "file://$O/a/$SHA91.json"
cp "$D/$Z91" "$O/b/" && cp "$D/$SC" "$O/side.json"
R=$(host_root "$D/cudnnctl-pins.sha256")
expect_exit 0 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json --dry-run \
  install --archive "$O/b/$(basename "$Z91")" --sidecar "$O/side.json"
expect_json 'd["data"]["archive"]["form"]' repack
no_entry "$R"
expect_exit 0 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json \
  install --archive "$O/b/$(basename "$Z91")" --sidecar "$O/side.json"
expect_json 'd["data"]["archive"]["repack"]["sidecar_url"]' "file://$O/side.json"

TEST "--archive FILE.tar.zst refused: no pin (4), no sidecar (2), a sidecar unlike its pin (4), changed bytes (4)"
R=$(host_root "$E2E_TMP/manifest-only.sha256")
expect_exit 4 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json install --archive "$D/$Z91"
expect_error "no site pin names a repack of that archive"
expect_exit 4 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json --dry-run install --archive "$D/$Z91"
expect_error "no site pin names a repack of that archive"
no_entry "$R"
R=$(host_root "$D/cudnnctl-pins.sha256")
expect_exit 2 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json install --archive "$O/b/$(basename "$Z91")"
expect_error "no sidecar for the repack"
expect_error "--sidecar FILE"
sed 's/"zstd_level":3/"zstd_level":4/' "$D/$SC" >"$O/changed.json"
expect_exit 4 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json \
  install --archive "$O/b/$(basename "$Z91")" --sidecar "$O/changed.json"
expect_error "but the site pin"
mkdir -p "$O/c" && cp "$D/$Z91" "$O/c/" && cp "$D/$SC" "$O/c/"
size=$(stat -c %s "$O/c/$(basename "$Z91")")
flip_byte "$O/c/$(basename "$Z91")" $((size / 2))
expect_exit 4 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json install --archive "$O/c/$(basename "$Z91")"
expect_error "sha256"
no_entry "$R"
expect_eq "$(find "$R/opt/cudnn/store" -maxdepth 1 -name '.staging-*' 2>/dev/null | wc -l)" 0 "staging left"

TEST "--sidecar without a .tar.zst archive: exit 2"
expect_exit 2 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json install 9.1.0 --sidecar "$O/side.json"
expect_error "--sidecar names the sidecar of a repack"
expect_exit 2 cudnnctl --root "$R" --mirror "$SITE" --cuda 12 --json install --archive "$D/$A91" --sidecar "$O/side.json"
expect_error "--archive FILE.tar.zst"
no_entry "$R"
