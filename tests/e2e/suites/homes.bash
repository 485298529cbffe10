# homes (issue 16): several CUDA homes (config cuda_homes). Each managed home gets the links of
# the active builds (primary and every slot) of its own toolkit's CUDA major: unversioned names
# from its highest cuDNN major, the other majors' versioned names too. A rollback of one slot
# moves only its home's links; a home whose CUDA major is unknown gets a warning and no links;
# a bad cuda_homes is exit 2 with nothing changed; --dry-run names each home's changes; adopt
# takes each home's hand-made cuDNN into the slot of its CUDA major.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_FIXTURES/adopt/handmade.bash"
require_cudnnctl

M=$(std_mirror)
E13=9.27.0.42-cuda13-linux-x86_64
E12=9.1.0.70-cuda12-linux-x86_64
E2712=9.27.0.42-cuda12-linux-x86_64
E8=8.9.7.29-cuda12-linux-x86_64

# mkhome ROOT NAME VERSION: a CUDA home /usr/local/NAME whose version.json says VERSION (none
# when VERSION is empty).
mkhome() {
  mkdir -p "$1/usr/local/$2/include" "$1/usr/local/$2/lib64"
  [ -z "$3" ] || printf '{"cuda": {"version": "%s"}}\n' "$3" >"$1/usr/local/$2/version.json"
}
# config ROOT LINE...: /etc/cudnnctl/config.toml under ROOT.
config() {
  local r=$1
  shift
  mkdir -p "$r/etc/cudnnctl"
  printf '%s\n' "$@" >"$r/etc/cudnnctl/config.toml"
}
# entry_of LINK: the store entry a CUDA-home link names (empty: not a link into the store).
entry_of() { readlink "$1" | sed -n 's#^.*/opt/cudnn/store/\([^/]*\)/.*$#\1#p'; }
expect_entry() { expect_eq "$(entry_of "$1")" "$2" "store entry named by $1"; }
# listing HOME: every cuDNN name in HOME's include/ and lib64/ with its link text.
listing() {
  local f
  for f in "$1"/include/cudnn* "$1"/lib64/libcudnn*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    printf '%s -> %s\n' "${f#"$1"/}" "$(readlink "$f")"
  done
}

R=$(new_root)
mkhome "$R" cuda-12.8 12.8.1
mkhome "$R" cuda-13.0 13.0.2
ln -s cuda-13.0 "$R/usr/local/cuda"
H12=$R/usr/local/cuda-12.8
H13=$R/usr/local/cuda-13.0
HOMES='cuda_homes = ["/usr/local/cuda-12.8", "/usr/local/cuda-13.0"]'
c() { cudnnctl --root "$R" --mirror "file://$M" "$@"; }

TEST "a bad cuda_homes value is exit 2 naming file:line, nothing changed"
for bad in 'cuda_homes = ["usr/local/cuda-12.8"]|is not an absolute path' \
  'cuda_homes = ["/usr/local/cuda-12.8", "/usr/local/cuda-12.8/"]|names /usr/local/cuda-12.8/ twice' \
  'cuda_homes = "/usr/local/cuda-12.8"|must be a non-empty array' \
  'cuda_homes = []|must be a non-empty array'; do
  config "$R" "# homes" "${bad%%|*}"
  snap_tree "$R" root.cfg
  expect_exit 2 c --cuda 13 install 9.27.0 --no-smoke --json
  expect_error "$R/etc/cudnnctl/config.toml:2: cuda_homes"
  expect_error "${bad##*|}"
  expect_same_tree "$R" root.cfg "a refused config changed the root (${bad%%|*})"
done
config "$R" "$HOMES"

TEST "install 9.27.0 (CUDA 13): cuda-13.0 linked to it, cuda-12.8 gets nothing"
expect_exit 0 c --cuda 13 install 9.27.0 --no-smoke --json
expect_entry "$H13/lib64/libcudnn.so.9" "$E13"
expect_entry "$H13/lib64/libcudnn.so" "$E13"
expect_entry "$H13/include/cudnn.h" "$E13"
expect_eq "$(listing "$H12")" "" "cuda-12.8's cuDNN names"

TEST "install 9.1.0 (CUDA 12) --alongside: cuda-12.8 linked to it, cuda-13.0 unchanged"
listing "$H13" >"$E2E_TMP/h13.before"
expect_exit 0 c --cuda 12 install 9.1.0 --alongside --no-smoke --json
expect_json 'd["data"]["slot"]' 9-cuda12
# Checked against the toolkit it is linked into, not the default one (CUDA 13): no --force.
expect_check cuda-toolkit passed
expect_json '[c["message"] for c in d["data"]["checks"] if c["name"] == "cuda-toolkit"][0]' "CUDA 12 build matches the CUDA 12.8 toolkit at /usr/local/cuda-12.8"
expect_entry "$H12/lib64/libcudnn.so.9" "$E12"
expect_entry "$H12/lib64/libcudnn.so" "$E12"
expect_entry "$H12/include/cudnn.h" "$E12"
listing "$H13" >"$E2E_TMP/h13.after"
cmp -s "$E2E_TMP/h13.before" "$E2E_TMP/h13.after" || fail "cuda-13.0's links changed"

TEST "install 8.9.7 (CUDA 12) --alongside: cuda-12.8 gets libcudnn.so.8, its unversioned names stay 9.x"
expect_exit 0 c --cuda 12 install 8.9.7 --alongside --no-smoke --json
expect_json 'd["data"]["slot"]' 8-cuda12
expect_entry "$H12/lib64/libcudnn.so.8" "$E8"
expect_entry "$H12/lib64/libcudnn_ops_infer.so.8" "$E8"
expect_entry "$H12/lib64/libcudnn.so.9" "$E12"
expect_entry "$H12/lib64/libcudnn.so" "$E12"
expect_entry "$H12/include/cudnn.h" "$E12"
# The 8.x build is for CUDA 12: none of its names in cuda-13.0.
expect_no_file "$H13/lib64/libcudnn.so.8"
expect_entry "$H13/lib64/libcudnn.so.9" "$E13"
expect_entry "$H13/include/cudnn.h" "$E13"
# Every cuDNN link resolves, in both homes.
for f in "$H12"/lib64/libcudnn* "$H12"/include/cudnn* "$H13"/lib64/libcudnn* "$H13"/include/cudnn*; do
  [ -e "$f" ] || fail "$f dangles"
done

TEST "status --json: data.cuda_homes names each home, its CUDA major and its entry"
expect_exit 0 c status --json
expect_json '[(h["home"], h["cuda"], h["entry"]) for h in d["data"]["cuda_homes"]]' "[[\"/usr/local/cuda-12.8\", 12, \"$E12\"], [\"/usr/local/cuda-13.0\", 13, \"$E13\"]]"
expect_exit 0 c status
expect_contains "$OUT" "CUDA homes: /usr/local/cuda-12.8 (CUDA 12): $E12; /usr/local/cuda-13.0 (CUDA 13): $E13"

TEST "rollback --slot 9-cuda12 moves only cuda-12.8's links; cuda-13.0 byte-identical"
expect_exit 0 c --cuda 12 install 9.27.0 --alongside --no-smoke --json
expect_json 'd["data"]["slot"]' 9-cuda12
expect_entry "$H12/lib64/libcudnn.so.9" "$E2712"
expect_entry "$H12/lib64/libcudnn.so.8" "$E8"
listing "$H13" >"$E2E_TMP/h13.before"
ls -l --time-style=+%s.%N "$H13/lib64" "$H13/include" >"$E2E_TMP/h13ls.before"
expect_exit 0 c rollback --slot 9-cuda12 --json
expect_json 'd["data"]["slot"]' 9-cuda12
expect_entry "$H12/lib64/libcudnn.so.9" "$E12"
expect_entry "$H12/lib64/libcudnn.so" "$E12"
expect_entry "$H12/include/cudnn.h" "$E12"
expect_entry "$H12/lib64/libcudnn.so.8" "$E8"
listing "$H13" >"$E2E_TMP/h13.after"
ls -l --time-style=+%s.%N "$H13/lib64" "$H13/include" >"$E2E_TMP/h13ls.after"
cmp -s "$E2E_TMP/h13.before" "$E2E_TMP/h13.after" || fail "cuda-13.0's link texts changed"
cmp -s "$E2E_TMP/h13ls.before" "$E2E_TMP/h13ls.after" || fail "cuda-13.0's listing changed"

TEST "--dry-run names each home's link changes and changes nothing"
snap_tree "$R" root
expect_exit 0 c --cuda 12 --dry-run use 9.27.0 --alongside --json
expect_json 'any(a.startswith("CUDA home /usr/local/cuda-12.8 (CUDA 12): '"$E2712, $E8"': ") and not a.endswith(": 0 link(s) made or repointed, 0 removed") for a in d["actions"])' true
expect_json 'any(a == "CUDA home /usr/local/cuda-13.0 (CUDA 13): '"$E13"': 0 link(s) made or repointed, 0 removed" for a in d["actions"])' true
expect_exit 0 c -v --cuda 12 --dry-run use 9.27.0 --alongside
expect_contains "$OUT" "cuda-12.8/lib64/libcudnn.so.9 -> ../../../../opt/cudnn/store/$E2712/lib/libcudnn.so.9"
expect_same_tree "$R" root "--dry-run changed the root"

TEST "a home whose CUDA major is unknown: a warning naming it, no links there"
mkhome "$R" cuda-x ""
config "$R" 'cuda_homes = ["/usr/local/cuda-12.8", "/usr/local/cuda-13.0", "/usr/local/cuda-x"]'
listing "$H13" >"$E2E_TMP/h13.before"
expect_exit 0 c --cuda 12 use 9.27.0 --alongside --json
expect_json 'any("cannot tell the CUDA major of the toolkit in /usr/local/cuda-x" in w for w in d["warnings"])' true
expect_eq "$(listing "$R/usr/local/cuda-x")" "" "cuda-x's cuDNN names"
expect_entry "$H12/lib64/libcudnn.so.9" "$E2712"
listing "$H13" >"$E2E_TMP/h13.after"
cmp -s "$E2E_TMP/h13.before" "$E2E_TMP/h13.after" || fail "cuda-13.0's links changed"
expect_exit 0 c status --json
expect_json '[[h["home"], h["cuda"], h["entry"]] for h in d["data"]["cuda_homes"]][2]' '["/usr/local/cuda-x", null, null]'

TEST "adopt with several homes: each home's hand-made cuDNN into the slot of its CUDA major"
A=$(new_root)
mkhome "$A" cuda-12.8 12.8.1
mkhome "$A" cuda-13.0 13.0.2
hand_copy "$(release_dir 9.1.0 12)" "$A/usr/local/cuda-12.8" cp-P
hand_copy "$(release_dir 9.27.0 13)" "$A/usr/local/cuda-13.0" cp-P
config "$A" "$HOMES"
expect_exit 0 cudnnctl --root "$A" status --json
expect_json 'd["data"]["unmanaged"]["cuda_home"]' /usr/local/cuda-12.8
tree_snapshot "$A" >"$E2E_TMP/a.before"
expect_exit 0 cudnnctl --root "$A" --dry-run adopt --json
expect_json 'd["changed"]' true
expect_json '[(h["cuda_home"], h["version"]) for h in d["data"]["homes"]]' '[["/usr/local/cuda-12.8", "9.1.0"], ["/usr/local/cuda-13.0", "9.27.0"]]'
tree_snapshot "$A" >"$E2E_TMP/a.after"
cmp -s "$E2E_TMP/a.before" "$E2E_TMP/a.after" || fail "adopt --dry-run changed the root"
expect_exit 2 cudnnctl --root "$A" adopt --cuda-home /usr/local/cuda-11.8 --json
expect_error "is not one of the CUDA homes cudnnctl manages"
expect_exit 0 cudnnctl --root "$A" adopt --json
expect_json '[(h["cuda_home"], h["generation"]) for h in d["data"]["homes"]]' '[["/usr/local/cuda-12.8", 1], ["/usr/local/cuda-13.0", 2]]'
A12=$(entry_of "$A/usr/local/cuda-12.8/lib64/libcudnn.so.9")
A13=$(entry_of "$A/usr/local/cuda-13.0/lib64/libcudnn.so.9")
case $A12 in 9.1.0-cuda12-linux-x86_64-adopted-????????) ;; *) fail "cuda-12.8 names '$A12'" ;; esac
case $A13 in 9.27.0-cuda13-linux-x86_64-adopted-????????) ;; *) fail "cuda-13.0 names '$A13'" ;; esac
expect_entry "$A/usr/local/cuda-13.0/include/cudnn.h" "$A13"
expect_entry "$A/usr/local/cuda-12.8/include/cudnn.h" "$A12"
expect_exit 0 cudnnctl --root "$A" status --json
expect_json '[(s["slot"], s["primary"]) for s in d["data"]["slots"]]' '[["9-cuda12", true], ["9-cuda13", false]]'
# The originals' bytes are what each home shows.
cmp -s "$(release_dir 9.27.0 13)/include/cudnn_version.h" "$A/usr/local/cuda-13.0/include/cudnn_version.h" ||
  fail "cuda-13.0's cudnn_version.h differs after adopt"
expect_exit 0 cudnnctl --root "$A" adopt --json
expect_json 'd["changed"]' false
