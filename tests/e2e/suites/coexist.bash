# coexist: cudnnctl next to an apt-installed (dpkg-registered, held) cuDNN. The honest
# fixture is a real .deb built with dpkg-deb and installed with dpkg --root into the test root.
# cudnnctl must leave every dpkg-owned file and every update-alternatives link byte-identical,
# report the held package, and make the ld.so cache resolve libcudnn.so.N to the active store
# entry (measured with ldconfig -r, including what happens when the order is the other way).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_FIXTURES/adopt/handmade.bash"
require_cudnnctl
command -v dpkg-deb >/dev/null && command -v dpkg >/dev/null || skip "dpkg-deb/dpkg not installed"
M=$(std_mirror)
MIRROR=(--mirror "file://$M" --cuda 12)
R8=$(release_dir 8.9.7 12)
R9=$(release_dir 9.1.0 12)
R927=$(release_dir 9.27.0 12)
MA=/usr/lib/x86_64-linux-gnu

# dpkg_root ROOT: an empty dpkg database and Debian's loader configuration.
dpkg_root() {
  mkdir -p "$1/var/lib/dpkg/info" "$1/var/lib/dpkg/updates" "$1/var/lib/dpkg/triggers" \
    "$1/var/lib/dpkg/alternatives" "$1/etc/alternatives" "$1$MA"
  : >"$1/var/lib/dpkg/status"
  printf '# libc default configuration\n/usr/local/lib\n' >"$1/etc/ld.so.conf.d/libc.conf"
  printf '# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n' \
    >"$1/etc/ld.so.conf.d/x86_64-linux-gnu.conf"
}
dpkg_in() { local r=$1; shift; dpkg --root="$r" --force-not-root --force-script-chrootless --log=/dev/null "$@"; }
# first_provider ROOT SONAME: the file the ld.so cache under ROOT gives SONAME (first entry).
first_provider() { ldconfig -r "$1" -p | awk -v s="$2" '$1 == s && /x86-64/ { print $NF; exit }'; }
# foreign_snapshot ROOT: everything dpkg and update-alternatives own under ROOT.
foreign_snapshot() {
  local r=$1 d
  for d in "$MA" /usr/include/x86_64-linux-gnu /var/lib/dpkg /etc/alternatives; do
    [ -d "$r$d" ] && tree_snapshot "$r$d" | sed "s|^|$d |"
  done
  [ -d "$r/usr/local/cuda/include" ] && tree_snapshot "$r/usr/local/cuda/include" | grep -E '^(\.|cudnn)' | sed 's|^|cuda/include |'
  true
}

DEB=$E2E_TMP/libcudnn9-stub.deb
bash "$E2E_FIXTURES/adopt/mkdeb.sh" "$DEB" libcudnn9-stub 9.27.0.42-1 "$R927" "$MA" /usr/include/x86_64-linux-gnu

# ---------------------------------------------------------------------------------------------
TEST "a held apt cuDNN in the multiarch dir: the ld.so cache resolves to cudnnctl's generation"
R=$(new_root)
dpkg_root "$R"
expect_exit 0 dpkg_in "$R" -i "$DEB"
echo "libcudnn9-stub hold" | dpkg --root="$R" --set-selections
expect_exit 0 dpkg-query --root="$R" -W -f='${Status}' libcudnn9-stub
expect_eq "$(cat "$OUT")" "hold ok installed" "dpkg status"
ldconfig -r "$R"
expect_eq "$(first_provider "$R" libcudnn.so.9)" "$MA/libcudnn.so.9" "before cudnnctl"
foreign_snapshot "$R" >"$E2E_TMP/foreign.before"

expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.1.0 --json
expect_json 'd["active"]["version"]' 9.1.0.70
expect_json 'any("libcudnn9-stub 9.27.0.42-1 installed and held" in w for w in d["warnings"])' true
expect_json 'd["data"]["dpkg_cudnn_packages"]' '[{"held": true, "name": "libcudnn9-stub", "version": "9.27.0.42-1"}]'
# Both copies are in the cache; cudnnctl's is listed first (00-cudnnctl.conf sorts before
# x86_64-linux-gnu.conf), so every process without its own RPATH loads it, although the distro
# copy is newer (9.27 > 9.1).
ldconfig -r "$R" -p >"$E2E_TMP/ldp"
expect_contains "$E2E_TMP/ldp" "libcudnn.so.9 (libc6,x86-64) => $MA/libcudnn.so.9"
expect_eq "$(first_provider "$R" libcudnn.so.9)" /opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn.so.9 "with 9.1.0 active"
expect_eq "$(first_provider "$R" libcudnn_graph.so.9)" /opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn_graph.so.9
expect_exit 0 cudnnctl --root "$R" status --json
expect_json 'any("held" in w for w in d["warnings"])' true

TEST "install 8.9.7, rollback: the dpkg files stay byte-identical and dpkg --verify is clean"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 8.9.7
expect_eq "$(first_provider "$R" libcudnn.so.8)" /opt/cudnn/store/8.9.7.29-cuda12-linux-x86_64/lib/libcudnn.so.8
# With 8.x active nothing of cudnnctl provides libcudnn.so.9: the distro copy answers for it.
expect_eq "$(first_provider "$R" libcudnn.so.9)" "$MA/libcudnn.so.9" "libcudnn.so.9 with 8.x active"
expect_exit 0 cudnnctl --root "$R" rollback
expect_eq "$(first_provider "$R" libcudnn.so.9)" /opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn.so.9 "after rollback"
foreign_snapshot "$R" >"$E2E_TMP/foreign.after"
diff "$E2E_TMP/foreign.before" "$E2E_TMP/foreign.after" >"$E2E_TMP/foreign.diff" || fail "dpkg files changed: $(head -5 "$E2E_TMP/foreign.diff")"
expect_exit 0 dpkg --root="$R" --verify libcudnn9-stub
expect_eq "$(cat "$OUT")" "" "dpkg --verify output"
expect_exit 0 dpkg --root="$R" --audit
expect_exit 0 dpkg-query --root="$R" -W -f='${Status}' libcudnn9-stub
expect_eq "$(cat "$OUT")" "hold ok installed" "dpkg status after"

TEST "measured: the drop-in's name is what wins (renamed after x86_64-linux-gnu.conf, the distro copy wins)"
X=$E2E_TMP/renamed-root
cp -a "$R" "$X"
mv "$X/etc/ld.so.conf.d/00-cudnnctl.conf" "$X/etc/ld.so.conf.d/zz-cudnnctl.conf"
ldconfig -r "$X"
expect_eq "$(first_provider "$X" libcudnn.so.9)" "$MA/libcudnn.so.9" "with zz-cudnnctl.conf"
rm -rf "$X"

TEST "an ld.so.conf naming the multiarch dir before the include: the loader check refuses (exit 5)"
R4=$(new_root)
dpkg_root "$R4"
expect_exit 0 dpkg_in "$R4" -i "$DEB"
printf '/usr/lib/x86_64-linux-gnu\ninclude /etc/ld.so.conf.d/*.conf\n' >"$R4/etc/ld.so.conf"
foreign_snapshot "$R4" >"$E2E_TMP/f4.before"
expect_exit 5 cudnnctl --root "$R4" "${MIRROR[@]}" install 9.1.0 --json
expect_json '"resolves libcudnn.so.9 to /usr/lib/x86_64-linux-gnu/libcudnn.so.9" in d["error"]["message"]' true
expect_no_file "$R4/opt/cudnn/current"
diff "$E2E_TMP/f4.before" <(foreign_snapshot "$R4") >/dev/null || fail "dpkg files changed by a refused install"

# ---------------------------------------------------------------------------------------------
TEST "dpkg-owned headers in the CUDA home: adopt takes only the hand-made libraries"
R2=$(new_root)
dpkg_root "$R2"
cuda_home_plain "$R2"
DEB2=$E2E_TMP/cudnn-headers-stub.deb
bash "$E2E_FIXTURES/adopt/mkdeb.sh" "$DEB2" cudnn-headers-stub 9.27.0.42-1 "$R927" - /usr/local/cuda/include
expect_exit 0 dpkg_in "$R2" -i "$DEB2"
cp -P "$R8"/lib/libcudnn* "$R2/usr/local/cuda/lib64/" # hand-made libraries next to apt's headers
tree_snapshot "$R2/usr/local/cuda/include" >"$E2E_TMP/inc.before"
foreign_snapshot "$R2" >"$E2E_TMP/f2.before"
expect_exit 0 cudnnctl --root "$R2" adopt --json
expect_json 'd["data"]["version"]' 8.9.7
expect_json 'd["data"]["version_source"]' "library file names"
expect_json 'any("dpkg package cudnn-headers-stub" in w and "nothing in it is adopted" in w for w in d["warnings"])' true
expect_json 'all(f.startswith("/usr/local/cuda/lib64/") for f in d["data"]["files"])' true
[ -L "$R2/usr/local/cuda/lib64/libcudnn.so.8" ] && [[ $(readlink "$R2/usr/local/cuda/lib64/libcudnn.so.8") == */opt/cudnn/store/* ]] || fail "libraries not linked"
expect_exit 0 cudnnctl --root "$R2" "${MIRROR[@]}" install 9.1.0 --json
expect_json 'any("/usr/local/cuda/include holds cuDNN files cudnnctl does not manage" in w for w in d["warnings"])' true
[[ $(readlink "$R2/usr/local/cuda/lib64/libcudnn.so.9") == */store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn.so.9 ]] || fail "lib64 not linked to 9.1.0"
expect_exit 0 cudnnctl --root "$R2" rollback
cmp -s "$E2E_TMP/inc.before" <(tree_snapshot "$R2/usr/local/cuda/include") || fail "include/ (dpkg-owned) changed"
diff "$E2E_TMP/f2.before" <(foreign_snapshot "$R2") >/dev/null || fail "dpkg files changed"
expect_exit 0 dpkg --root="$R2" --verify cudnn-headers-stub
expect_eq "$(cat "$OUT")" "" "dpkg --verify output"

TEST "an update-alternatives link in the CUDA home is never modified"
R3=$(new_root)
dpkg_root "$R3"
cuda_home_plain "$R3"
expect_exit 0 dpkg_in "$R3" -i "$DEB"
hand_copy "$R9" "$R3/usr/local/cuda" cp-P
rm "$R3/usr/local/cuda/include/cudnn.h"
update-alternatives --root "$R3" --log /dev/null --install /usr/local/cuda/include/cudnn.h libcudnn \
  /usr/include/x86_64-linux-gnu/cudnn.h 90 >/dev/null
expect_symlink "$R3/usr/local/cuda/include/cudnn.h" /etc/alternatives/libcudnn
foreign_snapshot "$R3" >"$E2E_TMP/f3.before"
tree_snapshot "$R3/usr/local/cuda/include" >"$E2E_TMP/inc3.before"
expect_exit 0 cudnnctl --root "$R3" "${MIRROR[@]}" install 8.9.7 --json
expect_json 'd["data"]["adopted"]["version"]' 9.1.0
expect_json 'any("update-alternatives group libcudnn" in w for w in d["warnings"])' true
expect_exit 0 cudnnctl --root "$R3" rollback
expect_exit 0 cudnnctl --root "$R3" adopt --undo
cmp -s "$E2E_TMP/inc3.before" <(tree_snapshot "$R3/usr/local/cuda/include") || fail "include/ with the alternatives link changed"
diff "$E2E_TMP/f3.before" <(foreign_snapshot "$R3") >/dev/null || fail "alternatives or dpkg files changed"
expect_symlink "$R3/usr/local/cuda/include/cudnn.h" /etc/alternatives/libcudnn
expect_exit 0 update-alternatives --root "$R3" --query libcudnn
expect_contains "$OUT" "Value: /usr/include/x86_64-linux-gnu/cudnn.h"
