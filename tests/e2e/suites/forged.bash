# forged: restore of crafted backups whose sums are all consistent (tests/fixtures/forge_backup.py
# recomputes every sha256), so only checks of what the values and files ARE can refuse them
# (issue 34, F3, F4, F11). docs/RELIABILITY.md "Forged backups".
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
M=$(std_mirror)
MIRROR=(--mirror "file://$M" --cuda 12)
forge() { python3 "$E2E_FIXTURES/forge_backup.py" "$@" || fail "forge_backup.py $*"; }
B=$E2E_TMP/b
mkdir -m 755 "$B"

R=$(new_root)
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.1.0
expect_exit 0 cudnnctl --root "$R" backup --output "$B/g91.tar.gz"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.27.0
MF=$R/opt/cudnn/modulefiles

# tcl_eval DIR: source every module file of DIR (and .version) in the real tclsh, with the
# module commands as procs that print what they are given.
tcl_eval() {
  tclsh <<EOF
proc module-whatis {args} {}
proc conflict {args} {}
proc prereq {args} {}
proc setenv {k v} { puts "\$k=\$v" }
proc prepend-path {k v} { puts "\$k+=\$v" }
foreach f [lsort [glob -directory {$1} -nocomplain -types f * .version]] { source \$f }
puts "default=\$ModulesVersion"
EOF
}
# lua_eval DIR: dofile every .lua file of DIR in the real lua, the same way.
lua_eval() {
  lua - "$1" <<'EOF'
function whatis() end
function conflict() end
function prereq() end
function setenv(k, v) print(k .. "=" .. v) end
function prepend_path(k, v) print(k .. "+=" .. v) end
local dir = arg[1]
local p = io.popen('ls "' .. dir .. '"')
for name in p:lines() do
  if name:match("%.lua$") then dofile(dir .. "/" .. name) end
end
EOF
}

TEST "F3: labels that break out of Tcl or Lua, or climb out of the prefix, are refused (exit 4, nothing changed)"
CANARY=$E2E_TMP/f3-canary
i=0
for label in "9.1.0[exec touch $CANARY]" "9.1.0\"; exec touch $CANARY; set x \"" \
  "9.1.0\"); os.execute(\"touch $CANARY\") --" "../../../../$E2E_TMP/f3-out/name" "9.1.0\$HOME"; do
  i=$((i + 1))
  forge "$B/g91.tar.gz" "$B/f3-$i.tar.gz" --set "label=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$label")"
  tree_snapshot "$R" >"$E2E_TMP/f3.before"
  expect_exit 4 cudnnctl --root "$R" restore "$B/f3-$i.tar.gz"
  expect_contains "$ERR" "invalid label"
  expect_eq "$(grep -c 'cudnnctl: error: ' "$ERR")" 1 "error lines"
  tree_snapshot "$R" >"$E2E_TMP/f3.after"
  cmp -s "$E2E_TMP/f3.before" "$E2E_TMP/f3.after" || fail "restore of label $label changed the root: $(diff "$E2E_TMP/f3.before" "$E2E_TMP/f3.after" | head)"
done
expect_no_file "$E2E_TMP/f3-out"
tcl_eval "$MF/cudnn" >"$E2E_TMP/tcl.out" 2>&1 || fail "tclsh: $(cat "$E2E_TMP/tcl.out")"
lua_eval "$MF/lmod/cudnn" >"$E2E_TMP/lua.out" 2>&1 || fail "lua: $(cat "$E2E_TMP/lua.out")"
expect_no_file "$CANARY"
expect_contains "$E2E_TMP/tcl.out" "default=9.27.0-cuda12"

TEST "F3: a genuine backup restores; tclsh and lua read its module files as the store paths"
expect_exit 0 cudnnctl --root "$R" restore "$B/g91.tar.gz" --json
E=$(json_get 'd["data"]["entry"]')
# The store still holds the backup's files as they were installed: restore switches to that
# entry instead of importing a copy (issue 37, item 8).
expect_eq "$E" 9.1.0.70-cuda12-linux-x86_64 "the restored entry"
tcl_eval "$MF/cudnn" >"$E2E_TMP/tcl.out" 2>&1 || fail "tclsh: $(cat "$E2E_TMP/tcl.out")"
lua_eval "$MF/lmod/cudnn" >"$E2E_TMP/lua.out" 2>&1 || fail "lua: $(cat "$E2E_TMP/lua.out")"
expect_contains "$E2E_TMP/tcl.out" "default=9.1.0-cuda12"
expect_contains "$E2E_TMP/tcl.out" "CUDNN_PATH=/opt/cudnn/store/$E"
expect_contains "$E2E_TMP/lua.out" "CUDNN_PATH=/opt/cudnn/store/$E"
expect_contains "$E2E_TMP/lua.out" "LD_LIBRARY_PATH+=/opt/cudnn/store/$E/lib"
expect_no_file "$CANARY"

TEST "F4: a 9.1.0 backup relabelled 9.27.0.42 (sums recomputed) is refused: the files are not what it claims"
forge "$B/g91.tar.gz" "$B/f4.tar.gz" --set 'version="9.27.0.42"' --set 'label="9.27.0"'
expect_exit 0 cudnnctl --root "$R" use 9.27.0
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/f4.before"
expect_exit 4 cudnnctl --root "$R" restore "$B/f4.tar.gz"
expect_eq "$(grep -c 'cudnnctl: error: ' "$ERR")" 1 "error lines"
expect_contains "$ERR" "does not hold cuDNN 9.27.0.42 as its backup.json says"
expect_contains "$ERR" "include/cudnn_version.h: says 9.1.0"
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/f4.after"
cmp -s "$E2E_TMP/f4.before" "$E2E_TMP/f4.after" || fail "the prefix changed: $(diff "$E2E_TMP/f4.before" "$E2E_TMP/f4.after" | head)"
expect_exit 0 cudnnctl --root "$R" --json status
expect_json 'd["active"]["version"]' 9.27.0.42
# A runtime-only backup relabelled: the library set names the truth.
forge "$B/g91.tar.gz" "$B/f4r.tar.gz" --set 'version="9.27.0.42"' --set 'label="9.27.0"' --set 'components=["runtime"]'
expect_exit 4 cudnnctl --root "$R" restore "$B/f4r.tar.gz"
expect_contains "$ERR" "does not hold cuDNN 9.27.0.42"

TEST "F11: a backup or list owned by another user, or in a directory others can write: refused without --force"
NB=$E2E_TMP/nobody-backups
mkdir -m 755 "$NB"
cp "$B/g91.tar.gz" "$B/g91.tar.gz.sha256" "$NB/"
chown -R nobody:nogroup "$NB"
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/f11.before"
expect_exit 1 cudnnctl --root "$R" restore "$NB/g91.tar.gz"
expect_eq "$(grep -c 'cudnnctl: error: ' "$ERR")" 1 "error lines"
expect_contains "$ERR" "refusing to restore $NB/g91.tar.gz: $NB/g91.tar.gz is owned by another user (nobody"
chown root:root "$NB/g91.tar.gz"
expect_exit 1 cudnnctl --root "$R" restore "$NB/g91.tar.gz"
expect_contains "$ERR" "g91.tar.gz.sha256 is owned by another user (nobody"
chown root:root "$NB/g91.tar.gz.sha256"
expect_exit 1 cudnnctl --root "$R" restore "$NB/g91.tar.gz"
expect_contains "$ERR" "$NB is owned by another user (nobody"
chown root:root "$NB"
chmod 0777 "$NB"
expect_exit 1 cudnnctl --root "$R" restore "$NB/g91.tar.gz"
expect_contains "$ERR" "$NB is writable by other users (mode 0777"
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/f11.after"
cmp -s "$E2E_TMP/f11.before" "$E2E_TMP/f11.after" || fail "the prefix changed"
chown -R nobody:nogroup "$NB"
expect_exit 0 cudnnctl --root "$R" --force restore "$NB/g91.tar.gz"
chmod 0755 "$NB"

TEST "a backup of a few hundred KB declaring 80 MiB of files: refused before anything is written"
forge "$B/g91.tar.gz" "$B/bomb.tar.gz" --pad FIRST=$((80 << 20))
[ "$(stat -c %s "$B/bomb.tar.gz")" -lt $((2 << 20)) ] || fail "the forged backup is not small: $(stat -c %s "$B/bomb.tar.gz")"
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/bomb.before"
expect_exit 4 cudnnctl --root "$R" restore "$B/bomb.tar.gz"
expect_contains "$ERR" "its files add up to more than"
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/bomb.after"
cmp -s "$E2E_TMP/bomb.before" "$E2E_TMP/bomb.after" || fail "the prefix changed"
