# adopt: take over hand-made installs in the CUDA home (backup tarball, store entry,
# generation, links), CUDA-home links at every switch, rollback to the adopted state,
# adopt --undo, install adopting first, crash recovery, backup/restore across roots.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash" # cr_state_snapshot
source "$E2E_FIXTURES/adopt/handmade.bash"
require_cudnnctl
std_mirror_args
R8=$(release_dir 8.9.7 12)
R9=$(release_dir 9.1.0 12)

# ---------------------------------------------------------------------------------------------
TEST "adopt a cp-without--P install behind cuda -> alternatives -> cuda-12.4, lib64 -> targets/x86_64-linux/lib"
R=$(new_root)
cuda_home_alt "$R"
HOME_REAL=$R/usr/local/cuda-12.4
hand_copy "$R8" "$HOME_REAL" cp
LIBDIR=$HOME_REAL/targets/x86_64-linux/lib
[ -f "$LIBDIR/libcudnn.so.8" ] && [ ! -L "$LIBDIR/libcudnn.so.8" ] || fail "fixture: expected the cp mistake"
cp -a "$HOME_REAL" "$E2E_TMP/orig-home"
tree_snapshot "$HOME_REAL" >"$E2E_TMP/home.before"
tree_snapshot "$R" >"$E2E_TMP/root.before"

expect_exit 0 cudnnctl --root "$R" --dry-run adopt --json
expect_json 'd["changed"]' true
tree_snapshot "$R" >"$E2E_TMP/root.after-dry"
cmp -s "$E2E_TMP/root.before" "$E2E_TMP/root.after-dry" || fail "adopt --dry-run wrote something"

expect_exit 0 cudnnctl --root "$R" adopt --json
expect_json 'd["ok"]' true
expect_json 'd["changed"]' true
expect_json 'd["active"]["version"]' 8.9.7
expect_json 'd["active"]["generation"]' 1
expect_json 'd["data"]["version_source"]' include/cudnn_version.h
expect_json 'any("regular file where a symlink to libcudnn.so.8.9.7 belongs" in w for w in d["warnings"])' true
BACKUP=$(json_get 'd["data"]["backup"]')
ENTRY_A=$(json_get 'd["data"]["entry"]')
case $ENTRY_A in 8.9.7-cuda12-linux-x86_64-adopted-????????) ;; *) fail "entry name $ENTRY_A" ;; esac
case $BACKUP in "$R"/var/lib/cudnnctl/backups/adopt-8.9.7-*.tar.zst | "$R"/var/lib/cudnnctl/backups/adopt-8.9.7-*.tar.gz) ;; *) fail "backup path $BACKUP" ;; esac
expect_file "$BACKUP"
expect_file "$BACKUP.sha256"
expect_exit 0 cudnnctl --root "$R" list --json
expect_json '[e["origin"] for e in d["data"]["installed"]]' '["adopted"]'
expect_home_links "$R" "$ENTRY_A"
# Every path users know keeps working, with the original bytes.
for f in "$E2E_TMP"/orig-home/targets/x86_64-linux/lib/libcudnn* "$E2E_TMP"/orig-home/targets/x86_64-linux/include/cudnn*; do
  sub=lib64
  case $f in */include/*) sub=include ;; esac
  cmp -s "$f" "$HOME_REAL/$sub/$(basename "$f")" || fail "$(basename "$f") differs after adopt"
done
# The store entry holds the originals byte for byte (the regular-file .so.8 stays a file).
[ -f "$R/opt/cudnn/store/$ENTRY_A/lib/libcudnn.so.8" ] && [ ! -L "$R/opt/cudnn/store/$ENTRY_A/lib/libcudnn.so.8" ] ||
  fail "the store entry should keep the regular-file copy as it was"
expect_symlink "$R/usr/local/cuda" /etc/alternatives/cuda
expect_symlink "$R/etc/alternatives/cuda" /usr/local/cuda-12.4
expect_symlink "$HOME_REAL/lib64" targets/x86_64-linux/lib

TEST "adopt's tarball holds exactly the originals, with a sha256 list inside and beside"
X=$E2E_TMP/untar
mkdir -p "$X"
tar -xf "$BACKUP" -C "$X"
(cd "$(dirname "$BACKUP")" && sha256sum -c --ignore-missing --quiet "$(basename "$BACKUP").sha256") || fail "sidecar sha256 list does not match the tarball"
(cd "$X" && sha256sum -c --quiet .cudnnctl-backup/SHA256SUMS) || fail "inner SHA256SUMS does not match the members"
n=0
for f in "$E2E_TMP"/orig-home/targets/x86_64-linux/lib/libcudnn* "$E2E_TMP"/orig-home/targets/x86_64-linux/include/cudnn*; do
  rel=${f#"$E2E_TMP"/orig-home/}
  cmp -s "$f" "$X/usr/local/cuda-12.4/$rel" || fail "tarball member usr/local/cuda-12.4/$rel differs from the original"
  n=$((n + 1))
done
got=$(cd "$X" && find usr -type f -o -type l | wc -l)
expect_eq "$got" "$n" "number of data members"

# ---------------------------------------------------------------------------------------------
TEST "install 9.1.0 over the adopted 8.9.7: links name the new entry, 8.x-only names are gone"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.1.0 --json
expect_json 'd["active"]["version"]' 9.1.0.70
expect_json '"adopted" in d["data"]' false
expect_home_links "$R" 9.1.0.70-cuda12-linux-x86_64
[ ! -e "$HOME_REAL/lib64/libcudnn_ops_infer.so.8" ] && [ ! -L "$HOME_REAL/lib64/libcudnn_ops_infer.so.8" ] || fail "8.x-only library left"
[ ! -L "$HOME_REAL/include/cudnn_ops_infer.h" ] || fail "8.x-only header left"
[ -L "$HOME_REAL/lib64/libcudnn_graph.so.9" ] || fail "9.x-only library missing"
ldconfig -r "$R" -p >"$E2E_TMP/ldp"
expect_contains "$E2E_TMP/ldp" "libcudnn.so.9 (libc6,x86-64) => /opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn.so.9"
expect_file "$R/opt/cudnn/lib/pkgconfig/cudnn.pc"
expect_contains "$R/opt/cudnn/lib/pkgconfig/cudnn.pc" "Version: 9.1.0.70"

TEST "install 9.27.0, then rollback twice: the adopted state, original bytes at the original paths"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.27.0 --json
expect_home_links "$R" 9.27.0.42-cuda12-linux-x86_64
[ -L "$HOME_REAL/lib64/libcudnn_engines_tensor_ir.so.9" ] || fail "9.27-only library missing"
expect_exit 0 cudnnctl --root "$R" rollback --json
expect_json 'd["active"]["version"]' 9.1.0.70
expect_home_links "$R" 9.1.0.70-cuda12-linux-x86_64
[ ! -L "$HOME_REAL/lib64/libcudnn_engines_tensor_ir.so.9" ] || fail "9.27-only name left after rollback"
expect_exit 0 cudnnctl --root "$R" rollback --json
expect_json 'd["active"]["generation"]' 1
expect_json 'd["active"]["version"]' 8.9.7
expect_home_links "$R" "$ENTRY_A"
[ ! -L "$HOME_REAL/lib64/libcudnn_graph.so.9" ] || fail "9.x-only name left after rolling back to 8.9.7"
for f in "$E2E_TMP"/orig-home/targets/x86_64-linux/lib/libcudnn* "$E2E_TMP"/orig-home/targets/x86_64-linux/include/cudnn*; do
  sub=lib64
  case $f in */include/*) sub=include ;; esac
  cmp -s "$f" "$HOME_REAL/$sub/$(basename "$f")" || fail "$(basename "$f"): not the original bytes after two rollbacks"
done
ldconfig -r "$R" -p >"$E2E_TMP/ldp"
expect_contains "$E2E_TMP/ldp" "libcudnn.so.8 (libc6,x86-64) => /opt/cudnn/store/$ENTRY_A/lib/libcudnn.so.8"
expect_exit 0 cudnnctl --root "$R" verify

TEST "adopt again finds nothing to adopt"
expect_exit 0 cudnnctl --root "$R" adopt --json
expect_json 'd["changed"]' false

# ---------------------------------------------------------------------------------------------
TEST "adopt --undo: exactly the pre-cudnnctl files at the original paths, cudnnctl inactive"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.1.0 --json # active: not the adopted one
expect_exit 0 cudnnctl --root "$R" adopt --undo --json
expect_json 'd["ok"]' true
expect_json 'd["active"]' null
tree_snapshot "$HOME_REAL" >"$E2E_TMP/home.after-undo"
diff "$E2E_TMP/home.before" "$E2E_TMP/home.after-undo" >"$E2E_TMP/home.diff" || fail "CUDA home differs from before adopt: $(head -5 "$E2E_TMP/home.diff")"
expect_no_file "$R/opt/cudnn/current"
expect_no_file "$R/etc/ld.so.conf.d/00-cudnnctl.conf"
expect_no_file "$R/opt/cudnn/lib/pkgconfig/cudnn.pc"
expect_exit 0 cudnnctl --root "$R" status --json
expect_json 'd["active"]' null
expect_exit 2 cudnnctl --root "$R" adopt --undo
TEST "after --undo, install adopts the released files again (same bytes: same store entry)"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.27.0 --json
expect_json 'd["data"]["adopted"]["entry"]' "$ENTRY_A"
expect_json 'd["active"]["version"]' 9.27.0.42
expect_home_links "$R" 9.27.0.42-cuda12-linux-x86_64

# ---------------------------------------------------------------------------------------------
TEST "install adopts unmanaged files first (links kept as links), and rollback returns to them"
R2=$(new_root)
cuda_home_plain "$R2"
hand_copy "$R9" "$R2/usr/local/cuda" cp-P
[ -L "$R2/usr/local/cuda/lib64/libcudnn.so.9" ] || fail "fixture: expected symlinks"
cp -a "$R2/usr/local/cuda" "$E2E_TMP/orig-plain"
tree_snapshot "$R2" >"$E2E_TMP/r2.before-dry"
expect_exit 0 cudnnctl --root "$R2" "${MIRROR[@]}" --dry-run install 8.9.7 --json
expect_json 'd["changed"]' true
expect_json 'any("would adopt the unmanaged cuDNN 9.1.0" in a for a in d["actions"])' true
cmp -s "$E2E_TMP/r2.before-dry" <(tree_snapshot "$R2") || fail "install --dry-run wrote something"
expect_exit 0 cudnnctl --root "$R2" "${MIRROR[@]}" install 8.9.7 --json
expect_json 'd["active"]["version"]' 8.9.7.29
expect_json 'd["data"]["adopted"]["version"]' 9.1.0
expect_json 'd["previous"]["version"]' 9.1.0
expect_json 'any("adopting the unmanaged cuDNN 9.1.0" in a for a in d["actions"])' true
ENTRY_B=$(json_get 'd["data"]["adopted"]["entry"]')
B2=$(json_get 'd["data"]["adopted"]["backup"]')
expect_home_links "$R2" 8.9.7.29-cuda12-linux-x86_64
mkdir -p "$E2E_TMP/untar2" && tar -xf "$B2" -C "$E2E_TMP/untar2"
expect_symlink "$E2E_TMP/untar2/usr/local/cuda/lib64/libcudnn.so.9" libcudnn.so.9.1.0
expect_symlink "$R2/opt/cudnn/store/$ENTRY_B/lib/libcudnn.so.9" libcudnn.so.9.1.0
expect_exit 0 cudnnctl --root "$R2" rollback --json
expect_json 'd["active"]["version"]' 9.1.0
expect_home_links "$R2" "$ENTRY_B"
expect_exit 0 cudnnctl --root "$R2" adopt --undo
diff <(tree_snapshot "$E2E_TMP/orig-plain") <(tree_snapshot "$R2/usr/local/cuda") >/dev/null ||
  fail "plain CUDA home differs from before after --undo"

TEST "manage_cuda_home = false: install leaves a hand-made CUDA home alone, adopt refuses"
R7=$(new_root)
cuda_home_plain "$R7"
hand_copy "$R9" "$R7/usr/local/cuda" cp
mkdir -p "$R7/etc/cudnnctl"
echo 'manage_cuda_home = false' >"$R7/etc/cudnnctl/config.toml"
tree_snapshot "$R7/usr/local/cuda" >"$E2E_TMP/r7.before"
expect_exit 0 cudnnctl --root "$R7" "${MIRROR[@]}" install 8.9.7 --json
expect_json '"adopted" in d["data"]' false
expect_json 'd["previous"]' null
cmp -s "$E2E_TMP/r7.before" <(tree_snapshot "$R7/usr/local/cuda") || fail "the CUDA home changed with manage_cuda_home = false"
expect_exit 2 cudnnctl --root "$R7" adopt
expect_contains "$ERR" "manage_cuda_home = false"

TEST "adopt --cuda-home DIR: a second toolkit's hand copy is adopted and kept linked at every switch"
R8R=$(new_root)
cuda_home_alt "$R8R"
mkdir -p "$R8R/usr/local/cuda-11.8/include" "$R8R/usr/local/cuda-11.8/lib64"
echo '#define CUDART_VERSION 11080' >"$R8R/usr/local/cuda-11.8/include/cuda_runtime_api.h"
hand_copy "$R8" "$R8R/usr/local/cuda-11.8" cp-P
expect_exit 0 cudnnctl --root "$R8R" adopt --cuda-home /usr/local/cuda-11.8 --json
expect_json 'd["data"]["entry"].startswith("8.9.7-cuda11-linux-x86_64-adopted-")' true
expect_exit 0 cudnnctl --root "$R8R" "${MIRROR[@]}" install 9.1.0
for d in "$R8R/usr/local/cuda-11.8/lib64" "$R8R/usr/local/cuda-12.4/targets/x86_64-linux/lib"; do
  [[ $(readlink "$d/libcudnn.so.9") == */store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn.so.9 ]] || fail "$d not linked to 9.1.0"
  [ ! -L "$d/libcudnn.so.8" ] || fail "$d keeps an 8.x link"
done

# ---------------------------------------------------------------------------------------------
TEST "crash during adopt before the switch: recover undoes it, originals untouched"
R3=$(new_root)
cuda_home_alt "$R3"
hand_copy "$R8" "$R3/usr/local/cuda-12.4" cp
tree_snapshot "$R3/usr/local/cuda-12.4" >"$E2E_TMP/h3.before"
CUDNNCTL_TEST_CRASH_AT=after-adopt-records expect_exit 86 cudnnctl --root "$R3" adopt
expect_exit 0 cudnnctl --root "$R3" recover --json
expect_json 'd["active"]' null
diff "$E2E_TMP/h3.before" <(tree_snapshot "$R3/usr/local/cuda-12.4") >/dev/null || fail "originals changed by an undone adopt"
[ -z "$(ls "$R3/opt/cudnn/store")" ] || fail "store entry left: $(ls "$R3/opt/cudnn/store")"
TEST "crash during adopt after the switch: recover finishes the replacement"
CUDNNCTL_TEST_CRASH_AT=after-switch expect_exit 86 cudnnctl --root "$R3" adopt
[ -f "$R3/usr/local/cuda-12.4/lib64/libcudnn.so.8" ] && [ ! -L "$R3/usr/local/cuda-12.4/lib64/libcudnn.so.8" ] || fail "replaced before integration?"
expect_exit 0 cudnnctl --root "$R3" recover --json
expect_json 'd["active"]["version"]' 8.9.7
E3=$(json_get 'd["active"]["path"]')
expect_home_links "$R3" "$(basename "$E3")"
TEST "crash during adopt --undo: recover puts the rest back"
CUDNNCTL_TEST_CRASH_AT=mid-release expect_exit 86 cudnnctl --root "$R3" adopt --undo
expect_exit 0 cudnnctl --root "$R3" status --json
expect_json 'd["data"]["interrupted_transaction"]' true
expect_exit 0 cudnnctl --root "$R3" recover
diff "$E2E_TMP/h3.before" <(tree_snapshot "$R3/usr/local/cuda-12.4") >/dev/null || fail "originals not back after recovering --undo"
expect_no_file "$R3/opt/cudnn/current"

TEST "adopt --undo from the backup when the store entry is gone"
expect_exit 0 cudnnctl --root "$R3" adopt --json
E3=$(json_get 'd["data"]["entry"]')
chmod -R u+w "$R3/opt/cudnn/store/$E3"
echo corrupt >>"$R3/opt/cudnn/store/$E3/lib/libcudnn.so.8.9.7"
expect_exit 0 cudnnctl --root "$R3" adopt --undo
diff "$E2E_TMP/h3.before" <(tree_snapshot "$R3/usr/local/cuda-12.4") >/dev/null || fail "--undo from the backup differs"

TEST "a read-only CUDA home: rollback still switches (warning), adopt refuses before changing anything"
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
  R5=$(new_root)
  cuda_home_alt "$R5"
  LIB5=$R5/usr/local/cuda-12.4/targets/x86_64-linux/lib
  hand_copy "$R8" "$R5/usr/local/cuda-12.4" cp
  expect_exit 0 cudnnctl --root "$R5" adopt --json
  E5=$(json_get 'd["data"]["entry"]')
  expect_exit 0 cudnnctl --root "$R5" "${MIRROR[@]}" install 9.1.0
  ro() { unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"' _ "$LIB5" "$@"; }
  expect_exit 0 ro "$CUDNNCTL" --root "$R5" rollback --json
  expect_json 'd["active"]["generation"]' 1
  expect_json 'any("cannot update the CUDA-home links in /usr/local/cuda-12.4/targets/x86_64-linux/lib" in w for w in d["warnings"])' true
  [[ $(readlink "$LIB5/libcudnn.so.9") == */store/9.1.0.70-cuda12-linux-x86_64/* ]] || fail "read-only links changed?"
  ldconfig -r "$R5" -p >"$E2E_TMP/ldp5"
  expect_contains "$E2E_TMP/ldp5" "libcudnn.so.8 (libc6,x86-64) => /opt/cudnn/store/$E5/lib/libcudnn.so.8"
  expect_exit 0 cudnnctl --root "$R5" adopt --json # writable again: adopt repairs the links
  expect_json 'd["changed"]' true
  expect_home_links "$R5" "$E5"
  expect_exit 0 cudnnctl --root "$R5" adopt --json
  expect_json 'd["changed"]' false
  R6=$(new_root)
  cuda_home_plain "$R6"
  hand_copy "$R9" "$R6/usr/local/cuda" cp-P
  tree_snapshot "$R6/usr" >"$E2E_TMP/r6.before"
  cr_state_snapshot "$R6" >"$E2E_TMP/r6.state"
  LIB5=$R6/usr/local/cuda/lib64
  expect_exit 1 ro "$CUDNNCTL" --root "$R6" adopt --json
  expect_json '"nothing was changed" in d["error"]["message"]' true
  [ -z "$(ls -A "$R6/opt/cudnn/store" 2>/dev/null)" ] || fail "a refused adopt left a store entry"
  [ -z "$(ls -A "$R6/var/lib/cudnnctl/backups" 2>/dev/null)" ] || fail "a refused adopt left a backup"
  diff "$E2E_TMP/r6.before" <(tree_snapshot "$R6/usr") >"$E2E_TMP/r6.diff" || fail "a refused adopt changed the CUDA home: $(cat "$E2E_TMP/r6.diff")"
  cr_expect_same_state "$R6" "$E2E_TMP/r6.state"
  TEST "a store on tmpfs never replaces files on persistent storage (links would dangle after a reboot)"
  # The case needs a CUDA home on persistent storage: where the test directory is itself a
  # tmpfs (scripts/test as root, a container's /tmp), the root is made under the build tree.
  R9T=$(new_persistent_root)
  fstype=$(stat -f -c %T "$R9T")
  if [ "$fstype" = tmpfs ] || [ "$fstype" = ramfs ]; then
    _e2e_say "    (case skipped: neither the test directory nor the build tree is on persistent storage)"
  else
    cuda_home_plain "$R9T"
    hand_copy "$R9" "$R9T/usr/local/cuda" cp-P
    tree_snapshot "$R9T/usr/local/cuda" >"$E2E_TMP/r9t.before"
    mkdir -p "$R9T/opt"
    tmpfs_opt() { unshare -m sh -c 'mount --make-rprivate / && mount -t tmpfs tmpfs "$1/opt" && shift && exec "$@"' _ "$R9T" "$@"; }
    expect_exit 1 tmpfs_opt "$CUDNNCTL" --root "$R9T" adopt --json
    expect_json '"is on tmpfs" in d["error"]["message"]' true
    expect_exit 0 tmpfs_opt "$CUDNNCTL" --root "$R9T" "${MIRROR[@]}" install 8.9.7 --json
    expect_json 'any("not adopting the cuDNN 9.1.0" in w for w in d["warnings"])' true
    expect_json '"adopted" in d["data"]' false
    cmp -s "$E2E_TMP/r9t.before" <(tree_snapshot "$R9T/usr/local/cuda") || fail "a tmpfs store changed the CUDA home"
  fi
else
  _e2e_say "    (skipped: needs root and unshare -m)"
fi

# ---------------------------------------------------------------------------------------------
TEST "backup of the active generation restores in another root"
RA=$(new_root)
RB=$(new_root)
expect_exit 0 cudnnctl --root "$RA" "${MIRROR[@]}" --cuda 12 install 9.1.0
expect_exit 0 cudnnctl --root "$RA" backup --json
DEF=$(json_get 'd["data"]["backup"]')
case $DEF in "$RA"/var/lib/cudnnctl/backups/9.1.0.70-cuda12-linux-x86_64-gen1-*) ;; *) fail "default backup path $DEF" ;; esac
expect_exit 0 cudnnctl --root "$RA" backup --output "$E2E_TMP/export.tar.gz" --json
expect_file "$E2E_TMP/export.tar.gz.sha256"
[ "$(head -c2 "$E2E_TMP/export.tar.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "--output .tar.gz is not gzip"
expect_exit 0 cudnnctl --root "$RB" restore "$E2E_TMP/export.tar.gz" --json
expect_json 'd["active"]["version"]' 9.1.0.70
EB=$(json_get 'd["data"]["entry"]')
case $EB in 9.1.0.70-cuda12-linux-x86_64-restored-????????) ;; *) fail "restored entry $EB" ;; esac
diff -r --no-dereference "$RA/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib" "$RB/opt/cudnn/store/$EB/lib" || fail "restored lib/ differs"
diff -r --no-dereference "$RA/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/include" "$RB/opt/cudnn/store/$EB/include" || fail "restored include/ differs"
expect_exit 0 cudnnctl --root "$RB" verify
expect_exit 0 cudnnctl --root "$RB" list --json
expect_json '[e["origin"] for e in d["data"]["installed"]]' '["restored"]'
ldconfig -r "$RB" -p >"$E2E_TMP/ldpb"
expect_contains "$E2E_TMP/ldpb" "libcudnn.so.9 (libc6,x86-64) => /opt/cudnn/store/$EB/lib/libcudnn.so.9"
expect_exit 0 cudnnctl --root "$RB" restore "$E2E_TMP/export.tar.gz" --json
expect_json 'd["changed"]' false

TEST "restore of a build still in the store switches to it, no second entry; FILE.sha256 names FILE (issue 37, item 8)"
expect_exit 0 cudnnctl --root "$RA" restore "$E2E_TMP/export.tar.gz"
expect_contains "$OUT" "from this backup is already active; nothing to do"
expect_exit 0 cudnnctl --root "$RA" restore "$E2E_TMP/export.tar.gz.sha256" --json
expect_json 'd["changed"]' false
expect_json 'd["data"]["entry"]' 9.1.0.70-cuda12-linux-x86_64
expect_exit 0 cudnnctl --root "$RA" "${MIRROR[@]}" --cuda 12 install 9.27.0
expect_exit 0 cudnnctl --root "$RA" --dry-run restore "$E2E_TMP/export.tar.gz"
expect_contains "$OUT" "would restore cuDNN 9.1.0.70 from $E2E_TMP/export.tar.gz as 9.1.0.70-cuda12-linux-x86_64"
expect_exit 0 cudnnctl --root "$RA" restore "$E2E_TMP/export.tar.gz" --json
expect_json 'd["changed"]' true
expect_json 'd["data"]["entry"]' 9.1.0.70-cuda12-linux-x86_64
expect_json 'd["active"]["version"]' 9.1.0.70
expect_exit 0 cudnnctl --root "$RA" list --json
expect_json 'sorted(e["entry"] for e in d["data"]["installed"])' '["9.1.0.70-cuda12-linux-x86_64", "9.27.0.42-cuda12-linux-x86_64"]'
expect_exit 0 cudnnctl --root "$RA" verify
# A stored entry that no longer holds what it recorded is not reused: the backup's bytes win.
expect_exit 0 cudnnctl --root "$RA" use 9.27.0 --no-smoke
lib=$RA/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn.so.9.1.0
chmod u+w "$lib" "$(dirname "$lib")"
printf 'X' | dd of="$lib" bs=1 seek=300 conv=notrunc status=none
expect_exit 0 cudnnctl --root "$RA" restore "$E2E_TMP/export.tar.gz" --json
EA=$(json_get 'd["data"]["entry"]')
case $EA in 9.1.0.70-cuda12-linux-x86_64-restored-????????) ;; *) fail "restored over a damaged entry as $EA" ;; esac
expect_json 'any("no longer holds them" in w and "lib/libcudnn.so.9.1.0" in w for w in d["warnings"])' true
expect_exit 0 cudnnctl --root "$RA" verify

TEST "a tampered backup is refused (exit 4) before anything changes"
python3 - "$E2E_TMP/export.tar.gz" "$E2E_TMP/tampered.tar.gz" <<'PY'
import io, sys, tarfile
src = tarfile.open(sys.argv[1])
dst = tarfile.open(sys.argv[2], "w:gz", format=tarfile.PAX_FORMAT)
for m in src.getmembers():
    data = src.extractfile(m).read() if m.isfile() else None
    if m.name == "lib/libcudnn.so.9.1.0":
        data = data[:200] + bytes([data[200] ^ 1]) + data[201:]
    dst.addfile(m, io.BytesIO(data) if data is not None else None)
dst.close()
PY
# with a list beside it (restore refuses a backup without one: issue 14, B14), so that what
# refuses it is the member's own sha256
cp "$E2E_TMP/export.tar.gz.sha256" "$E2E_TMP/tampered.tar.gz.sha256"
RC_=$(new_root)
tree_snapshot "$RC_" >"$E2E_TMP/rc.before"
expect_exit 4 cudnnctl --root "$RC_" restore "$E2E_TMP/tampered.tar.gz" --json
expect_json 'd["error"]["code"]' integrity
expect_json '"sha256 mismatch" in d["error"]["message"]' true
cmp -s "$E2E_TMP/rc.before" <(tree_snapshot "$RC_") || fail "a refused restore changed the root"
tree_snapshot "$RB" >"$E2E_TMP/rb.before"
cp "$E2E_TMP/export.tar.gz" "$E2E_TMP/side.tar.gz"
{ head -n -1 "$E2E_TMP/export.tar.gz.sha256"; echo "$(printf '0%.0s' $(seq 64))  side.tar.gz"; } >"$E2E_TMP/side.tar.gz.sha256"
expect_exit 4 cudnnctl --root "$RB" restore "$E2E_TMP/side.tar.gz"
expect_contains "$ERR" "side.tar.gz.sha256"
cmp -s "$E2E_TMP/rb.before" <(tree_snapshot "$RB") || fail "a refused restore changed the root"

TEST "an adopt backup restores in another root too"
RD=$(new_root)
expect_exit 0 cudnnctl --root "$RD" restore "$BACKUP" --json
expect_json 'd["active"]["version"]' 8.9.7
expect_json 'd["data"]["backup_kind"]' adopt
expect_exit 0 cudnnctl --root "$RD" verify
