# slot views (issue 16): doctor explains the slots and which build a process gets; verify,
# check and env of a non-primary slot (--slot S, verify --all-slots); `use --none --slot S`
# deactivates a slot kept alongside in one journaled transaction, rolled forward after a crash.
# Under temporary roots with the standard mirror and the real `ldconfig -r`.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
source "$E2E_DIR/slots_lib.bash"
provider() { ldconfig -r "$1" -p | awk -v s="$2" '$1 == s && /x86-64/ { print $NF; exit }'; }
# doctor exits 0, or 8 for error findings of the fake root: either way a report.
doctor_json() {
  run "$@" doctor --json
  [ "$RC" -eq 0 ] || [ "$RC" -eq 8 ] || fail "doctor exit $RC"
}
doctor_text() {
  run "$@" doctor
  [ "$RC" -eq 0 ] || [ "$RC" -eq 8 ] || fail "doctor exit $RC"
}
unchanged() { # LABEL: the prefix and the state directory as before (snapshot "before")
  tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/prefix.after"
  cmp -s "$E2E_TMP/prefix.before" "$E2E_TMP/prefix.after" || fail "$1 changed the prefix"
  [ ! -e "$R/var/lib/cudnnctl/journal.json" ] || fail "$1 left a journal"
}

TEST "one slot: doctor says nothing about slots (data.slots lists the primary)"
expect_exit 0 c --cuda 13 install 9.27.0 --no-smoke --json
doctor_text c
expect_not_contains "$OUT" "cudnnctl slots"
doctor_json c
expect_json '[(s["slot"], s["served"], s["why"], s["reach"]) for s in d["data"]["slots"]]' '[["9-cuda13", true, "the primary slot", []]]'
expect_json '[f["code"] for f in d["data"]["findings"] if f["code"] == "slot-not-loaded"]' '[]'

expect_exit 0 c --cuda 12 install 8.9.7 --alongside --no-smoke --json
expect_exit 0 c --cuda 12 install 9.1.0 --alongside --no-smoke --json
expect_json 'd["data"]["slot"]' 9-cuda12

TEST "doctor: every slot, which one the loader serves per SONAME and why, how to reach the others"
doctor_json c
expect_json '[(s["slot"], s["version"], s["generation"], s["soname"], s["served"]) for s in d["data"]["slots"]]' '[["9-cuda13", "9.27.0.42", 1, "libcudnn.so.9", true], ["8-cuda12", "8.9.7.29", 2, "libcudnn.so.8", true], ["9-cuda12", "9.1.0.70", 3, "libcudnn.so.9", false]]'
expect_json '[s["why"] for s in d["data"]["slots"]][:2]' '["the primary slot", "the only slot of cuDNN 8"]'
expect_json 'd["data"]["slots"][2]["why"]' "a plain process gets it from slot 9-cuda13 (the primary slot), not from this slot"
expect_json 'd["data"]["slots"][2]["reach"][0].startswith("cudnnctl env --slot 9-cuda12")' true
expect_json 'd["data"]["slots"][2]["reach"][1]' 'module load cudnn/9.1.0-cuda12 (after `module use /opt/cudnn/modulefiles`)'
expect_json '[(f["severity"], f["paths"]) for f in d["data"]["findings"] if f["code"] == "slot-not-loaded"]' "[[\"info\", [\"/opt/cudnn/store/$E91/lib\"]]]"
# What the rule says is what the loader does.
expect_eq "$(provider "$R" libcudnn.so.9)" "/opt/cudnn/store/$E9/lib/libcudnn.so.9" "libcudnn.so.9"
expect_eq "$(provider "$R" libcudnn.so.8)" "/opt/cudnn/store/$E8/lib/libcudnn.so.8" "libcudnn.so.8"
doctor_text c
expect_contains "$OUT" "cudnnctl slots (3, one store entry per SONAME in the loader drop-in):"
expect_contains "$OUT" "  9-cuda12: cuDNN 9.1.0.70, generation 3, $E91"
expect_contains "$OUT" "      libcudnn.so.9: a plain process gets it from slot 9-cuda13 (the primary slot), not from this slot"
expect_contains "$OUT" "      libcudnn.so.8: served by the loader drop-in (the only slot of cuDNN 8)"
expect_contains "$OUT" "      reach it: cudnnctl env --slot 9-cuda12"
expect_contains "$OUT" "slot-not-loaded: slot 9-cuda12 (cuDNN 9.1.0.70) is active"

TEST "doctor: two slots of one major beside the primary: the highest CUDA major is served"
R2=$(new_root)
mkdir -p "$R2/usr/local/cuda/include" "$R2/usr/local/cuda/lib64"
c2() { cudnnctl --root "$R2" --mirror "file://$M" "$@"; }
expect_exit 0 c2 --cuda 12 install 8.9.7 --no-smoke --json
expect_exit 0 c2 --cuda 12 install 9.1.0 --alongside --no-smoke --json
expect_exit 0 c2 --cuda 13 install 9.27.0 --alongside --no-smoke --json
doctor_json c2
expect_json '[(s["slot"], s["served"]) for s in d["data"]["slots"]]' '[["8-cuda12", true], ["9-cuda12", false], ["9-cuda13", true]]'
expect_json 'd["data"]["slots"][2]["why"]' "the highest CUDA major (CUDA 13) among the cuDNN 9 slots, no default toolkit detected"
expect_json 'd["data"]["slots"][1]["why"]' "a plain process gets it from slot 9-cuda13 (the highest CUDA major (CUDA 13) among the cuDNN 9 slots, no default toolkit detected), not from this slot"
expect_eq "$(provider "$R2" libcudnn.so.9)" "/opt/cudnn/store/$E9/lib/libcudnn.so.9" "libcudnn.so.9 in the second root"

TEST "env --slot S: the slot's variables name its immutable store path, never current"
expect_exit 0 c env --slot 9-cuda12 --ld-library-path --json
expect_json 'd["data"]["slot"]' 9-cuda12
expect_json 'd["data"]["CUDNN_PATH"]' "$R/opt/cudnn/store/$E91"
expect_json 'd["data"]["CUDNN_INCLUDE_DIR"]' "$R/opt/cudnn/store/$E91/include"
expect_json 'd["data"]["CUDNN_LIBRARY"]' "$R/opt/cudnn/store/$E91/lib/libcudnn.so"
expect_json 'd["data"]["LD_LIBRARY_PATH"]' "$R/opt/cudnn/store/$E91/lib"
expect_json 'd["data"]["TF_CUDNN_VERSION"]' 9
expect_json 'd["data"]["pkg_config_path"]' null
expect_json 'd["active"]["version"]' 9.27.0.42
expect_exit 0 c env --slot 8-cuda12
expect_contains "$OUT" "export CUDNN_PATH='$R/opt/cudnn/store/$E8';"
expect_not_contains "$OUT" "current"
# The primary's own id is the primary (current, as without --slot).
expect_exit 0 c env --slot 9-cuda13 --json
expect_json 'd["data"]["CUDNN_PATH"]' "$R/opt/cudnn/current"
expect_json '"slot" in d["data"]' false

TEST "env/verify/check --slot: a malformed or inactive slot is exit 2 naming the active slots"
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/prefix.before"
for cmd in env verify check; do
  expect_exit 2 c "$cmd" --slot bogus --json
  expect_error "--slot bogus: not a slot name"
  expect_error "active slots: 9-cuda13 (primary), 8-cuda12, 9-cuda12"
  expect_exit 2 c "$cmd" --slot 7-cuda11 --json
  expect_error "--slot 7-cuda11: no such active slot (active slots: 9-cuda13 (primary), 8-cuda12, 9-cuda12)"
done
expect_exit 2 c verify --slot 8-cuda12 --all-slots --json
unchanged "a refused --slot"

TEST "verify --slot S checks S's entry; --all-slots each slot, one line each"
expect_exit 0 c verify --slot 8-cuda12 --json
expect_json '[d["data"]["slot"], d["data"]["entry"], d["data"]["generation"], d["data"]["problems"]]' "[\"8-cuda12\", \"$E8\", 2, []]"
expect_json 'd["active"]["version"]' 9.27.0.42
expect_exit 0 c verify --slot 8-cuda12
expect_contains "$OUT" "recorded files and links of $E8 (slot 8-cuda12) match"
expect_exit 0 c verify --all-slots --json
expect_json '[(s["slot"], s["primary"], s["generation"], s["ok"]) for s in d["data"]["slots"]]' '[["9-cuda13", true, 1, true], ["8-cuda12", false, 2, true], ["9-cuda12", false, 3, true]]'
expect_json 'd["data"]["entry"]' "$E9"
expect_exit 0 c verify --all-slots
expect_eq "$(grep -c '^ok: ' "$OUT")" 3 "one ok line per slot"

TEST "a damaged slot entry: verify --slot and --all-slots exit 8, plain verify (the primary) still 0"
LIB=$(find "$R/opt/cudnn/store/$E91/lib" -type f -name 'libcudnn.so.9*' | head -1)
cp -p "$LIB" "$E2E_TMP/lib.orig"
printf 'x' >>"$LIB"
expect_exit 8 c verify --slot 9-cuda12 --json
expect_json 'any("sha256" in p for p in d["data"]["problems"])' true
expect_exit 0 c verify --json
expect_exit 8 c verify --all-slots --json
expect_json '[(s["slot"], s["ok"]) for s in d["data"]["slots"]]' '[["9-cuda13", true], ["8-cuda12", true], ["9-cuda12", false]]'
expect_error "1 of 3 slot(s) failed verification: 9-cuda12"
expect_exit 8 c verify --all-slots
expect_contains "$OUT" "FAILED:  9-cuda12, generation 3:"
expect_exit 8 c check --slot 9-cuda12 --json
expect_json 'd["data"]["slot"]' 9-cuda12
expect_json 'd["data"]["files_ok"]' false
expect_exit 0 c check --json
expect_json 'd["data"]["slot"]' primary
cp -p "$E2E_TMP/lib.orig" "$LIB"
expect_exit 0 c verify --all-slots

TEST "check --slot S: S's files and the drop-in line of a slot the loader serves"
expect_exit 0 c check --slot 8-cuda12 --expect 8.9.7
expect_contains "$OUT" "ok: cuDNN 8.9.7.29 (CUDA 12, linux-x86_64), generation 2, slot 8-cuda12"
expect_exit 8 c check --slot 8-cuda12 --expect 8.9.6 --json
expect_error "active is 8.9.7.29 (generation 2), expected 8.9.6"
# 9-cuda12 is not in the drop-in by design (slot 9-cuda13 serves libcudnn.so.9): healthy.
expect_exit 0 c check --slot 9-cuda12
# A drop-in that lost slot 8's line is a problem of slot 8 only.
cp -p "$R/etc/ld.so.conf.d/00-cudnnctl.conf" "$E2E_TMP/dropin.orig"
grep -v "$E8" "$E2E_TMP/dropin.orig" >"$R/etc/ld.so.conf.d/00-cudnnctl.conf"
expect_exit 8 c check --slot 8-cuda12 --json
expect_error "does not name /opt/cudnn/store/$E8/lib (slot 8-cuda12)"
expect_exit 0 c check --slot 9-cuda12
cp -p "$E2E_TMP/dropin.orig" "$R/etc/ld.so.conf.d/00-cudnnctl.conf"

TEST "use --none: bad input is exit 2 with the way out, nothing changed"
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/prefix.before"
expect_exit 2 c use --none --json
expect_error "use --none needs --slot S"
expect_error "cudnnctl rollback"
expect_exit 2 c use --none --slot 9-cuda13 --json
expect_error "--slot 9-cuda13 is the primary slot"
expect_error "adopt --undo"
expect_exit 2 c use --none --slot bogus --json
expect_error "not a slot name"
expect_exit 2 c use --none --slot 7-cuda11 --json
expect_error "no such active slot"
expect_exit 2 c use 9.1.0 --none --slot 9-cuda12 --json
expect_error "--slot S goes with --none and no VERSION"
expect_exit 2 c use --slot 9-cuda12 --json
expect_error "--slot S goes with --none and no VERSION"
expect_exit 2 c use --json
expect_error "use needs VERSION"
expect_exit 0 c --dry-run use --none --slot 9-cuda12 --json
expect_json 'd["changed"]' true
expect_json 'any("would remove" in a for a in d["actions"])' true
unchanged "a refused or dry-run use --none"

TEST "use --none --slot S killed at each step: undone before the pointer goes, else rolled forward"
RC2=$E2E_TMP/crash.before-switch
cp -a "$R" "$RC2"
expect_exit 86 env CUDNNCTL_TEST_CRASH_AT=before-switch "$CUDNNCTL" --root "$RC2" use --none --slot 8-cuda12
expect_exit 0 cudnnctl --root "$RC2" recover
expect_symlink "$RC2/opt/cudnn/slots/8-cuda12" ../generations/2
expect_contains "$RC2/etc/ld.so.conf.d/00-cudnnctl.conf" "$E8"
expect_eq "$(provider "$RC2" libcudnn.so.8)" "/opt/cudnn/store/$E8/lib/libcudnn.so.8" "libcudnn.so.8 after an undone deactivation"
expect_exit 0 cudnnctl --root "$RC2" history --json
expect_json '[(h["result"], h.get("slot")) for h in d["data"]["history"] if h["command"] == "use"]' '[["undone-by-recover", "8-cuda12"]]'
for s in after-switch after-integration before-commit after-history; do
  RC2=$E2E_TMP/crash.$s
  rm -rf "$RC2"
  cp -a "$R" "$RC2"
  expect_exit 86 env CUDNNCTL_TEST_CRASH_AT="$s" "$CUDNNCTL" --root "$RC2" use --none --slot 8-cuda12
  expect_exit 0 cudnnctl --root "$RC2" recover
  expect_no_file "$RC2/opt/cudnn/slots/8-cuda12"
  expect_symlink "$RC2/opt/cudnn/slots/9-cuda12" ../generations/3
  expect_symlink "$RC2/opt/cudnn/current" generations/1
  expect_no_file "$RC2/var/lib/cudnnctl/journal.json"
  expect_not_contains "$RC2/etc/ld.so.conf.d/00-cudnnctl.conf" "$E8"
  expect_eq "$(provider "$RC2" libcudnn.so.8)" "" "libcudnn.so.8 after the crash at $s"
  expect_eq "$(provider "$RC2" libcudnn.so.9)" "/opt/cudnn/store/$E9/lib/libcudnn.so.9" "libcudnn.so.9 after $s"
  expect_exit 0 cudnnctl --root "$RC2" history --json
  want=completed-by-recover
  [ "$s" != after-history ] || want=ok
  expect_json '[(h["result"], h.get("slot")) for h in d["data"]["history"] if h["command"] == "use"]' "[[\"$want\", \"8-cuda12\"]]"
done

TEST "use --none --slot 8-cuda12: the pointer goes, the loader and CUDA-home links without it, the entry stays"
expect_exit 0 c use --none --slot 8-cuda12 --json
expect_json '[d["data"]["slot"], d["data"]["generation"], d["data"]["entry"], d["changed"]]' "[\"8-cuda12\", 2, \"$E8\", true]"
expect_json 'd["active"]["version"]' 9.27.0.42
expect_no_file "$R/opt/cudnn/slots/8-cuda12"
expect_symlink "$R/opt/cudnn/current" generations/1
expect_dir "$R/opt/cudnn/store/$E8"
expect_not_contains "$R/etc/ld.so.conf.d/00-cudnnctl.conf" "$E8"
expect_eq "$(provider "$R" libcudnn.so.8)" "" "libcudnn.so.8 after the deactivation"
expect_eq "$(provider "$R" libcudnn.so.9)" "/opt/cudnn/store/$E9/lib/libcudnn.so.9" "libcudnn.so.9 after the deactivation"
expect_no_file "$R/usr/local/cuda/lib64/libcudnn.so.8"
expect_no_file "$R/usr/local/cuda/lib64/libcudnn_ops_infer.so.8"
expect_exit 0 c status --json
expect_json '[s["slot"] for s in d["data"]["slots"]]' '["9-cuda13", "9-cuda12"]'
expect_exit 0 c history --json
expect_json '[[h["result"], h["slot"], h["primary"], h["from"]["generation"], h["to"]] for h in d["data"]["history"][-1:]]' '[["ok", "8-cuda12", false, 2, null]]'
expect_exit 2 c rollback --slot 8-cuda12 --json
expect_error "no such active slot"
expect_exit 2 c use --none --slot 8-cuda12 --json
expect_error "no such active slot"
expect_exit 0 c remove 8.9.7 --json
expect_no_file "$R/opt/cudnn/store/$E8"
expect_exit 0 c verify --all-slots
