# trustwalk: what configures cudnnctl is trusted only when the file it reads is the file the
# ownership walk judged (issue 34, F5, F9, F10 and the config.toml -> /proc/self/fd/0 case).
# A symlink with an absolute target is resolved inside --root by the walk; the host path must
# reach the same file, or the command is refused (exit 1) before anything is read.
# docs/RELIABILITY.md "Trust walk and read".
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
[ "$(id -u)" -eq 0 ] || skip "needs root: files owned by nobody"
M=$(std_mirror)
# nobody's mirror: a copy of the standard one in a directory nobody owns
NB=$E2E_TMP/nobody
mkdir -m 755 "$NB"
cp -a "$M" "$NB/mirror"
chown -R nobody:nogroup "$NB"
RELMAN=$(cd "$M" && ls redistrib_9.1.0.json)

fresh() { # fresh: a root with /etc/cudnnctl/{pins.d,keys.d,recalls.d,compat.d}, root-owned
  local r
  r=$(new_root)
  mkdir -p "$r/etc/cudnnctl/pins.d" "$r/etc/cudnnctl/keys.d" "$r/etc/cudnnctl/recalls.d" "$r/etc/cudnnctl/compat.d"
  echo "$r"
}

TEST "F5: config.toml as a root-owned symlink to nobody's file by absolute path: refused, nobody's mirror unused"
R=$(fresh)
printf 'mirrors = ["file://%s"]\ncuda = 12\n' "$NB/mirror" >"$NB/config.toml"
chown nobody:nogroup "$NB/config.toml"
ln -s "$NB/config.toml" "$R/etc/cudnnctl/config.toml"
expect_exit 1 cudnnctl --root "$R" install 9.1.0 --force
expect_eq "$(grep -c 'cudnnctl: error: ' "$ERR")" 1 "error lines"
expect_contains "$ERR" "refusing to use the config $R/etc/cudnnctl/config.toml: on this host it leads to $NB/config.toml, inside the root to nothing"
expect_no_file "$R/opt/cudnn/current"
# The same link made relative inside the root, to a root-owned file: obeyed.
cp "$NB/config.toml" "$R/etc/cudnnctl/site.toml"
chown root:root "$R/etc/cudnnctl/site.toml"
ln -sfn site.toml "$R/etc/cudnnctl/config.toml"
expect_exit 0 cudnnctl --root "$R" status

TEST "F5: a pin in pins.d linked to nobody's file: --require-pin is not satisfied by it"
R=$(fresh)
(cd "$NB/mirror" && sha256sum "$RELMAN") >"$NB/pin.sha256"
chown nobody:nogroup "$NB/pin.sha256"
ln -s "$NB/pin.sha256" "$R/etc/cudnnctl/pins.d/nobody.sha256"
expect_exit 1 cudnnctl --root "$R" --mirror "file://$M" --cuda 12 --force --require-pin install 9.1.0
expect_contains "$ERR" "refusing to use the configuration file $R/etc/cudnnctl/pins.d/nobody.sha256: on this host it leads to $NB/pin.sha256"
expect_no_file "$R/opt/cudnn/current"
# pins.d itself as an absolute link to nobody's directory
rm -rf "$R/etc/cudnnctl/pins.d"
mkdir "$NB/pins.d"
cp "$NB/pin.sha256" "$NB/pins.d/"
chown -R nobody:nogroup "$NB/pins.d"
ln -s "$NB/pins.d" "$R/etc/cudnnctl/pins.d"
expect_exit 1 cudnnctl --root "$R" --mirror "file://$M" --cuda 12 --force --require-pin install 9.1.0
expect_contains "$ERR" "refusing to use the configuration directory $R/etc/cudnnctl/pins.d: on this host it leads to $NB/pins.d"
expect_no_file "$R/opt/cudnn/current"

TEST "F5: a key in keys.d linked to nobody's file: refused"
R=$(fresh)
recall_keys nobodykey
cp "$KEYS/nobodykey.pem" "$NB/key.pem"
chown nobody:nogroup "$NB/key.pem"
ln -s "$NB/key.pem" "$R/etc/cudnnctl/keys.d/site.pem"
expect_exit 1 cudnnctl --root "$R" status
expect_contains "$ERR" "keys.d/site.pem: on this host it leads to $NB/key.pem"

TEST "config.toml linked to /proc/self/fd/0: refused at once, stdin never read"
R=$(fresh)
ln -s /proc/self/fd/0 "$R/etc/cudnnctl/config.toml"
RC=0
timeout 60 "$CUDNNCTL" --root "$R" status >"$OUT" 2>"$ERR" < <(sleep 90) || RC=$?
E2E_LAST_CMD="cudnnctl --root $R status < <(sleep 90)"
E2E_LAST_RC=$RC
expect_eq "$RC" 1 "exit status (124: it waited on stdin)"
expect_contains "$ERR" "refusing to use the config $R/etc/cudnnctl/config.toml: on this host it leads to"

TEST "F9: --user: /etc/cudnnctl/recalls.d, keys.d or compat.d writable by others is refused"
for d in recalls.d keys.d compat.d; do
  R=$(fresh)
  chmod 0777 "$R/etc/cudnnctl/$d"
  expect_exit 1 env HOME=/home/alice "$CUDNNCTL" --root "$R" --user status
  expect_contains "$ERR" "$R/etc/cudnnctl/$d is writable by other users (mode 0777"
  chmod 0755 "$R/etc/cudnnctl/$d"
  printf '{}\n' >"$R/etc/cudnnctl/$d/x.json"
  chown nobody "$R/etc/cudnnctl/$d/x.json"
  expect_exit 1 env HOME=/home/alice "$CUDNNCTL" --root "$R" --user status
  expect_contains "$ERR" "$d/x.json is owned by another user (nobody"
  rm "$R/etc/cudnnctl/$d/x.json"
  expect_exit 0 env HOME=/home/alice "$CUDNNCTL" --root "$R" --user status
done

TEST "F10: compat.d overlays are trust-checked as root too"
R=$(fresh)
chmod 0777 "$R/etc/cudnnctl/compat.d"
expect_exit 1 cudnnctl --root "$R" status
expect_contains "$ERR" "$R/etc/cudnnctl/compat.d is writable by other users (mode 0777"
chmod 0755 "$R/etc/cudnnctl/compat.d"
printf '{}\n' >"$R/etc/cudnnctl/compat.d/nobody.json"
chown nobody "$R/etc/cudnnctl/compat.d/nobody.json"
expect_exit 1 cudnnctl --root "$R" doctor
expect_contains "$ERR" "compat.d/nobody.json is owned by another user (nobody"
expect_exit 1 cudnnctl --root "$R" recommend
chown root "$R/etc/cudnnctl/compat.d/nobody.json"
expect_exit 0 cudnnctl --root "$R" status
