#!/bin/bash
# TLS: a real nginx on loopback with certificates made at test time (tests/fixtures/tls.sh).
# A mirror whose certificate chains to the CA given with --cacert is used; an untrusted
# certificate, a wrong host name and an expired certificate are refused with exit 3, and
# nothing is downloaded into the cache. docs/RELIABILITY.md.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
source "$E2E_FIXTURES/nginx_tls.sh"
require_cudnnctl
command -v openssl >/dev/null || skip "openssl is not installed"
[ -x "$(command -v nginx || echo /usr/sbin/nginx)" ] || skip "nginx is not installed"

cr_mirror
PKI=$E2E_TMP/pki
bash "$E2E_FIXTURES/tls.sh" "$PKI" >"$E2E_TMP/tls.log" 2>&1 || fail "tls.sh: $(cat "$E2E_TMP/tls.log")"
declare -A URL
for c in server wronghost expired untrusted; do
  start_tls_nginx "$CR_MIRROR" "$PKI/$c.crt" "$PKI/$c.key" || fail "nginx with $c.crt did not start"
  URL[$c]=$TLS_URL
done
URL[localhost]=${URL[server]/127.0.0.1/localhost}
MAN=$CR_MIRROR/redistrib_9.1.0.json
SHA=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cudnn"]["linux-x86_64"]["cuda12"]["sha256"])' "$MAN")
N=0

tls_root() { R=$(new_root); cr_pin "$R"; }
# refused NAME ARGS...: exit 3, a TLS verification message, nothing in the cache, nothing
# activated.
refused() {
  local name=$1 snap
  shift
  TEST "tls: $name"
  tls_root
  snap=$E2E_TMP/snap.$N
  cr_state_snapshot "$R" >"$snap"
  expect_exit 3 cudnnctl --root "$R" --cuda 12 --platform linux-x86_64 "$@" install 9.1.0
  grep -qiE 'certificate|SSL|TLS|peer' "$ERR" || fail "the error does not name the TLS failure"
  expect_eq "$(ls -A "$R/var/cache/cudnnctl" 2>/dev/null)" "" "the cache"
  cr_expect_same_state "$R" "$snap"
  cr_check "$R" --allowed none --clean
  N=$((N + 1))
}
accepted() {
  local name=$1
  shift
  TEST "tls: $name"
  tls_root
  expect_exit 0 cudnnctl --root "$R" --cuda 12 --platform linux-x86_64 "$@" install 9.1.0
  cr_check "$R" --allowed 1 --clean --loader
  expect_eq "$(ls -A "$R/var/cache/cudnnctl")" "$SHA.tar.xz" "the cache"
  N=$((N + 1))
}

accepted "trusted CA via --cacert (manifest and archive over https)" --cacert "$PKI/ca.crt" --mirror "${URL[server]}/"
accepted "trusted CA, host name localhost" --cacert "$PKI/ca.crt" --mirror "${URL[localhost]}/"
TEST "tls: cacert from config.toml"
tls_root
mkdir -p "$R/etc/cudnnctl"
printf 'cacert = "%s"\nmirrors = ["%s/"]\n' "$PKI/ca.crt" "${URL[server]}" >"$R/etc/cudnnctl/config.toml"
expect_exit 0 cudnnctl --root "$R" --cuda 12 --platform linux-x86_64 install 9.1.0
cr_check "$R" --allowed 1 --clean --loader
N=$((N + 1))

for mode in "" archive; do
  extra=()
  what="manifest and archive"
  if [ "$mode" = archive ]; then extra=(--manifest "$MAN"); what="archive only"; fi
  refused "our CA without --cacert ($what)" "${extra[@]}" --mirror "${URL[server]}/"
  refused "untrusted self-signed certificate ($what)" "${extra[@]}" --cacert "$PKI/ca.crt" --mirror "${URL[untrusted]}/"
  refused "wrong host name ($what)" "${extra[@]}" --cacert "$PKI/ca.crt" --mirror "${URL[wronghost]}/"
  refused "expired certificate ($what)" "${extra[@]}" --cacert "$PKI/ca.crt" --mirror "${URL[expired]}/"
done
expect_contains "$ERR" "expired"

accepted "untrusted first mirror, trusted second: next mirror" --cacert "$PKI/ca.crt" \
  --mirror "${URL[untrusted]}/" --mirror "${URL[wronghost]}/" --mirror "${URL[server]}/"
echo "tls cases: $N" >&2
