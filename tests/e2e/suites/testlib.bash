#!/bin/bash
# Self-test of tests/e2e/lib.bash: new_root, tree_snapshot, and that every assertion can fail.
# Needs no cudnnctl binary (its nginx and standard-mirror helpers: suites/fixtures.bash).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"

# must_fail CMD...: run a lib.bash assertion in a subshell with its report silenced
must_fail() { (exec {_E2E_ERRFD}>/dev/null; "$@"); }

TEST "lib.bash: new_root layout"
R=$(new_root)
expect_dir "$R/etc/ld.so.conf.d"
expect_eq "$(cat "$R/etc/ld.so.conf")" 'include /etc/ld.so.conf.d/*.conf'
expect_eq "$(ls -A "$R/etc/ld.so.conf.d" | wc -l)" 0 "entries in ld.so.conf.d"
expect_eq "$(ls -A "$R" | tr '\n' ' ')" "etc " "top level of the root"
case $R in "$E2E_TMP"/*) ;; *) fail "root $R is not under \$E2E_TMP" ;; esac
R2=$(new_root)
expect_ne "$R" "$R2" "two roots"

TEST "lib.bash: tree_snapshot sees content, mode, symlink and new-file changes"
mkdir -p "$R/a/b"
echo one >"$R/a/b/f"
ln -s f "$R/a/b/l"
tree_snapshot "$R" >"$E2E_TMP/s0"
tree_snapshot "$R" >"$E2E_TMP/s1"
cmp -s "$E2E_TMP/s0" "$E2E_TMP/s1" || fail "snapshot is not stable"
ug="$(id -u):$(id -g)"
expect_contains "$E2E_TMP/s0" "a/b/l l 0777 $ug - ->f"
expect_contains "$E2E_TMP/s0" "a/b/f f 0644 $ug 4 $(echo one | sha256sum | cut -d' ' -f1)"
changed() { tree_snapshot "$R" >"$E2E_TMP/s2"; ! cmp -s "$E2E_TMP/s0" "$E2E_TMP/s2" || fail "missed: $1"; }
echo two >"$R/a/b/f"
changed "content"
echo one >"$R/a/b/f"
chmod 600 "$R/a/b/f"
changed "mode"
chmod 644 "$R/a/b/f"
ln -sfn g "$R/a/b/l"
changed "symlink target"
ln -sfn f "$R/a/b/l"
touch "$R/a/new"
changed "new file"
rm "$R/a/new"
tree_snapshot "$R" >"$E2E_TMP/s3"
cmp -s "$E2E_TMP/s0" "$E2E_TMP/s3" || fail "snapshot differs after undoing every change"
expect_exit 1 tree_snapshot "$E2E_TMP/does-not-exist"

TEST "lib.bash: every assertion can fail"
F=$E2E_TMP/assert
echo hello >"$F"
ln -sfn nowhere "$E2E_TMP/dangle"
expect_exit 1 must_fail expect_eq a b
expect_exit 0 must_fail expect_eq a a
expect_exit 1 must_fail expect_ne a a
expect_exit 1 must_fail expect_exit 3 false
expect_exit 1 must_fail expect_exit '!0' true
expect_exit 1 must_fail expect_contains "$F" bye
expect_exit 1 must_fail expect_contains "$E2E_TMP/none" hello
expect_exit 1 must_fail expect_not_contains "$F" hell
expect_exit 1 must_fail expect_file "$E2E_TMP/none"
expect_exit 1 must_fail expect_file "$E2E_TMP/dangle"
expect_exit 1 must_fail expect_no_file "$F"
expect_exit 1 must_fail expect_no_file "$E2E_TMP/dangle"
expect_exit 1 must_fail expect_dir "$F"
expect_exit 1 must_fail expect_symlink "$E2E_TMP/dangle" elsewhere
expect_exit 1 must_fail expect_symlink "$F" hello
expect_exit 0 must_fail expect_symlink "$E2E_TMP/dangle" nowhere
echo '{"active": {"version": "9.1.0.70"}, "ok": true, "n": 2}' >"$F.json"
expect_exit 0 must_fail expect_json 'd["active"]["version"]' 9.1.0.70 "$F.json"
expect_exit 1 must_fail expect_json 'd["active"]["version"]' 9.2.0.82 "$F.json"
expect_exit 1 must_fail expect_json 'd["missing"]' x "$F.json"
expect_exit 1 must_fail expect_json 'd["n"]' 2 "$F"
expect_exit 0 must_fail expect_json 'd["ok"]' true "$F.json"
expect_exit 1 must_fail fail "message"
expect_exit 125 must_fail skip "reason"
expect_exit 125 bash -c 'CUDNNCTL= && source "$0" && cudnnctl --help' "$E2E_DIR/lib.bash"
expect_exit 0 bash -c 'CUDNNCTL=/bin/echo && source "$0" && expect_exit 0 cudnnctl hi && expect_contains "$OUT" hi' "$E2E_DIR/lib.bash"
