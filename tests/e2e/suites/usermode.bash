# usermode: `--user`, the non-root mode (store/user_dirs.hpp): prefix, state, cache and config
# under the XDG directories of the user, no /etc writes, no loader drop-in, no CUDA-home links,
# no ldconfig; install and rollback as an unprivileged throwaway uid, with the proof that it
# wrote nothing outside its HOME; the refusals; how --root combines with --user.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
[ "$(id -u)" -eq 0 ] || skip "needs root to run commands as a throwaway uid"
command -v setpriv >/dev/null || skip "setpriv is missing"
M=$(std_mirror)
MIRROR=(--mirror "file://$M" --cuda 12 --force) # the host's toolkit may be CUDA 13
E1=9.1.0.70-cuda12-linux-x86_64
E2=9.27.0.42-cuda12-linux-x86_64

# A uid and gid no account has; HOME a directory it owns.
U=$((61000 + RANDOM % 3000))
while getent passwd "$U" >/dev/null || getent group "$U" >/dev/null; do U=$((U + 1)); done
H=$E2E_TMP/home
mkdir -m 700 "$H"
chown "$U:$U" "$H"
as_user() {
  setpriv --reuid="$U" --regid="$U" --clear-groups -- \
    env -i PATH=/usr/bin:/bin HOME="$H" "$@"
}
# Where a process of uid U can create files at all: the world-writable directories (nothing
# else is writable by U but its HOME, and the gid has no group-writable directory). Every
# file it creates there is owned by U.
WW=$(find / -xdev -type d -perm -0002 2>/dev/null | grep -v '^/proc' | tr '\n' ' ')
owned_outside_home() {
  # shellcheck disable=SC2086
  find $WW -xdev \( -uid "$U" -o -gid "$U" \) 2>/dev/null | grep -v "^$H\(/\|$\)" | sort -u || true
}
before_owned=$(owned_outside_home)
host_cache=$(sha256sum /etc/ld.so.cache 2>/dev/null || echo none)
host_conf=$(ls -la /etc/ld.so.conf.d)
host_cuda=$(find /usr/local -maxdepth 5 -name 'libcudnn*' -printf '%p %y %s %T@ %l\n' 2>/dev/null | sort)

TEST "as an unprivileged uid: install, install, rollback under the XDG directories"
expect_exit 0 as_user "$CUDNNCTL" --user "${MIRROR[@]}" install 9.1.0
expect_exit 0 as_user "$CUDNNCTL" --user "${MIRROR[@]}" install 9.27.0
P=$H/.local/share/cudnnctl
expect_symlink "$P/current" generations/2
expect_dir "$P/store/$E2"
expect_file "$H/.local/state/cudnnctl/history.jsonl"
expect_file "$H/.local/state/cudnnctl/lock"
[ -n "$(ls "$H/.cache/cudnnctl"/*.tar.xz 2>/dev/null)" ] || fail "no cached archive under ~/.cache/cudnnctl"
expect_contains "$ERR" "loader check skipped: --user mode"
# The cache is named where it is (issue 37, item 5), by install, status and list alike.
expect_contains "$OUT" " in $H/.cache/cudnnctl (\`cudnnctl gc --cache\` empties it)"
expect_not_contains "$OUT" "/var/cache/cudnnctl"
expect_exit 0 as_user "$CUDNNCTL" --user status
expect_contains "$OUT" "cache:    "
expect_contains "$OUT" " in $H/.cache/cudnnctl ("
expect_exit 0 as_user "$CUDNNCTL" --user list
expect_contains "$OUT" " in $H/.cache/cudnnctl ("
expect_exit 0 as_user "$CUDNNCTL" --user --json rollback
expect_json 'd["active"]["version"]' 9.1.0.70
expect_json 'd["active"]["path"]' "$P/store/$E1"
expect_symlink "$P/current" generations/1
expect_symlink "$P/modulefiles/lmod/cudnn/default" 9.1.0-cuda12.lua
expect_contains "$P/lib/pkgconfig/cudnn.pc" "$P/current"
expect_exit 0 as_user "$CUDNNCTL" --user --json status
expect_json 'd["active"]["generation"]' 1
expect_exit 0 as_user "$CUDNNCTL" --user verify
expect_exit 0 as_user "$CUDNNCTL" --user env --ld-library-path
expect_contains "$OUT" "export CUDNN_PATH='$P/current';"
expect_contains "$OUT" "export LD_LIBRARY_PATH='$P/store/$E1/lib'"
expect_exit 0 as_user "$CUDNNCTL" --user gc --keep 1
# purge names the user's own directories, not the system's (issue 37, item 5).
expect_exit 0 as_user "$CUDNNCTL" --user --dry-run purge
expect_contains "$OUT" "would remove $H/.cache/cudnnctl  (download cache, "
expect_contains "$OUT" "would remove $H/.local/state/cudnnctl  (state: "
expect_not_contains "$OUT" "/var/cache/cudnnctl"
expect_not_contains "$OUT" "/var/lib/cudnnctl"
expect_no_file "$P/store/$E2"
expect_no_file "$P/modulefiles/cudnn/9.27.0-cuda12"

TEST "nothing was written outside HOME: no file of the uid elsewhere, /etc and the CUDA home unchanged"
expect_eq "$(owned_outside_home)" "$before_owned" "files of uid $U outside $H"
expect_eq "$(sha256sum /etc/ld.so.cache 2>/dev/null || echo none)" "$host_cache" "the host's ld.so.cache changed"
expect_eq "$(ls -la /etc/ld.so.conf.d)" "$host_conf" "/etc/ld.so.conf.d changed"
expect_eq "$(find /usr/local -maxdepth 5 -name 'libcudnn*' -printf '%p %y %s %T@ %l\n' 2>/dev/null | sort)" \
  "$host_cuda" "the host's CUDA home changed"
[ -z "$(find "$H" ! -uid "$U")" ] || fail "files in HOME not owned by the uid: $(find "$H" ! -uid "$U")"

TEST "implied: a non-root user with --prefix under HOME gets the XDG state and cache"
expect_exit 0 as_user "$CUDNNCTL" --prefix "$H/sw/cudnn" "${MIRROR[@]}" install 9.1.0
# Generation 3: the user's history (shared by the user's prefixes, like the system's) already
# names generations 1 and 2 of the XDG prefix, and numbers are never reused.
expect_symlink "$H/sw/cudnn/current" generations/3
expect_file "$H/sw/cudnn/modulefiles/cudnn/9.1.0-cuda12"
# The state is the user's one (the lock and journal of both prefixes), never /var/lib.
expect_contains "$H/.local/state/cudnnctl/history.jsonl" "--prefix $H/sw/cudnn"
[ ! -e /var/lib/cudnnctl/history.jsonl ] || ! grep -q "$H/sw" /var/lib/cudnnctl/history.jsonl ||
  fail "the implied user mode wrote the system's history"

TEST "XDG variables are honoured; relative ones are ignored as the specification says"
X=$H/xdg
expect_exit 0 as_user env XDG_DATA_HOME="$X/data" XDG_STATE_HOME="$X/state" XDG_CACHE_HOME=rel/cache \
  "$CUDNNCTL" --user "${MIRROR[@]}" install 9.1.0
expect_symlink "$X/data/cudnnctl/current" generations/1
expect_file "$X/state/cudnnctl/history.jsonl"
[ -n "$(ls "$H/.cache/cudnnctl"/*.tar.xz 2>/dev/null)" ] || fail "relative XDG_CACHE_HOME was not ignored"
[ ! -e "$H/rel" ] || fail "a relative XDG_CACHE_HOME was used"

TEST "refusals: adopt needs root (exit 2, needs_root); --user without HOME (exit 2); nothing written"
snap=$(tree_snapshot "$H")
expect_exit 2 as_user "$CUDNNCTL" --user --json adopt
expect_json 'd["error"]["code"]' needs_root
expect_contains "$OUT" "adopt manages a CUDA home"
expect_exit 2 as_user "$CUDNNCTL" --user adopt --undo
expect_eq "$(wc -l <"$ERR")" 1 "stderr lines"
expect_exit 2 setpriv --reuid="$U" --regid="$U" --clear-groups -- env -i PATH=/usr/bin:/bin "$CUDNNCTL" --user status
expect_contains "$ERR" "--user needs HOME set to an absolute path"
expect_exit 2 as_user env HOME=relative "$CUDNNCTL" --user status
expect_eq "$(tree_snapshot "$H")" "$snap" "a refusal changed HOME"
# Without --user and without a prefix under HOME a non-root user gets the system paths and
# their permission error (exit 1), nothing else.
expect_exit 1 as_user "$CUDNNCTL" "${MIRROR[@]}" install 9.1.0
expect_eq "$(tree_snapshot "$H")" "$snap" "the failed system-mode install changed HOME"

TEST "--root with --user: the XDG paths are paths of the managed system, inside the root"
R=$(new_root)
expect_exit 0 env HOME=/home/alice "$CUDNNCTL" --root "$R" --user "${MIRROR[@]}" install 9.1.0
expect_symlink "$R/home/alice/.local/share/cudnnctl/current" generations/1
expect_file "$R/home/alice/.local/state/cudnnctl/history.jsonl"
expect_contains "$R/home/alice/.local/share/cudnnctl/modulefiles/cudnn/9.1.0-cuda12" \
  "setenv CUDNN_PATH \"/home/alice/.local/share/cudnnctl/store/$E1\""
expect_no_file "$R/etc/ld.so.conf.d/00-cudnnctl.conf"
expect_no_file "$R/etc/ld.so.cache"
[ ! -e "$R/var" ] && [ ! -e "$R/opt" ] || fail "--user wrote the system's directories under the root"
expect_exit 0 env HOME=/home/alice "$CUDNNCTL" --root "$R" --user --json status
expect_json 'd["active"]["path"]' "$R/home/alice/.local/share/cudnnctl/store/$E1"
