# SPDX-License-Identifier: Apache-2.0
# A fleet of booted Debian 12 hosts for the tests: systemd-nspawn containers with their own
# systemd as PID 1, each on an overlay over one cached root (tests/fleet/mkbase.sh), each
# running sshd on its own port of 127.0.0.1 (the host's network namespace: no other
# address is ever used). Source it after tests/e2e/lib.bash:
#   fleet_start N            boot nodes n1..nN (parallel), wait until each answers over SSH
#   fleet_ssh NODE CMD...    run CMD on NODE as root over SSH (keys made at test time)
#   fleet_root NODE          the node's root as the host sees it (its overlay mount)
#   fleet_restart NODE       restart the container (a cold boot of the node)
#   fleet_reboot NODE        `systemctl reboot` inside it; its nspawn is started again
#   fleet_inventory FILE     an Ansible inventory of the nodes (group "gpu", real SSH)
#   fleet_stop               stop everything (also in the EXIT trap and by the watchdog)
# Everything lives under $FLEET_DIR ($E2E_TMP/fleet); the base root is cached under
# $FLEET_CACHE (default $CUDNNCTL_BUILD_DIR/fleet-cache). Nothing touches the host's /etc,
# /var or /usr. Needs root, systemd-nspawn, debootstrap (first run) and ssh.

FLEET_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FLEET_DIR=$E2E_TMP/fleet
FLEET_NODES=()
declare -A FLEET_PORT=()
FLEET_TIME_BOUND=${FLEET_TIME_BOUND:-1500}
# Generous: a reboot on a loaded 2-core machine (or nested in a container) took over 180 s in
# CI; the polls stop as soon as the new boot answers.
FLEET_BOOT_TIMEOUT=${FLEET_BOOT_TIMEOUT:-420}

# fleet_requirements: skip (with the reason) unless the host can run the fleet.
fleet_requirements() {
  [ "$(id -u)" -eq 0 ] || skip "the fleet needs root (systemd-nspawn, overlay mounts)"
  local t
  for t in systemd-nspawn ssh ssh-keygen; do
    command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] || skip "$t is not installed (scripts/install-deps)"
  done
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || skip "no overlay filesystem"
}

# fleet_base: build or reuse the cached base root; sets FLEET_BASE.
fleet_base() {
  local cache=${FLEET_CACHE:-${CUDNNCTL_BUILD_DIR:-$E2E_TMP}/fleet-cache}
  FLEET_BASE=$(bash "$FLEET_LIB_DIR/mkbase.sh" "$cache") || fail "building the fleet's base root failed"
  [ -f "$FLEET_BASE/.fleet-base-complete" ] || fail "no complete base root at $FLEET_BASE"
}

_fleet_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# _fleet_prepare NODE PORT: overlay, identity, SSH host key, authorized key, fake GPU.
_fleet_prepare() {
  local name=$1 port=$2 d=$FLEET_DIR/nodes/$1 r
  mkdir -p "$d/upper" "$d/work" "$d/root"
  mount -t overlay overlay -o "lowerdir=$FLEET_BASE,upperdir=$d/upper,workdir=$d/work" "$d/root" ||
    fail "$name: overlay mount failed"
  r=$d/root
  echo "$name" >"$r/etc/hostname"
  python3 -c 'import uuid; print(uuid.uuid4().hex)' >"$r/etc/machine-id"
  ssh-keygen -q -t ed25519 -N '' -C "$name" -f "$r/etc/ssh/ssh_host_ed25519_key"
  printf 'Port %s\nListenAddress 127.0.0.1\nHostKey /etc/ssh/ssh_host_ed25519_key\n' "$port" \
    >"$r/etc/ssh/sshd_config.d/10-node.conf"
  install -d -m 0700 "$r/root/.ssh"
  install -m 0600 "$FLEET_DIR/ssh/id_ed25519.pub" "$r/root/.ssh/authorized_keys"
  echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$r/etc/ssh/ssh_host_ed25519_key.pub")" >>"$FLEET_DIR/ssh/known_hosts"
  if [ -n "${FLEET_FAKEGPU_LIB:-}" ]; then
    # The fake GPU of tests/fakegpu as the node's NVIDIA driver: libcuda.so.1 in the ld.so
    # cache, one device.
    install -D -m 0755 "$FLEET_FAKEGPU_LIB" "$r/usr/lib/fakegpu/libcuda.so.1"
    echo /usr/lib/fakegpu >"$r/etc/ld.so.conf.d/zz-fakegpu.conf"
    printf 'devices=1\n' >"$r/etc/cudnnctl-fake-cuda.conf"
    ldconfig -r "$r"
  fi
  echo "$port" >"$d/port"
}

# _fleet_supervise NODE: runs in the background; boots the container and boots it again
# when its systemd asks for a reboot (nspawn exits 133), until the stop flag is set.
_fleet_supervise() {
  local name=$1 d=$FLEET_DIR/nodes/$1 rc
  while [ ! -e "$d/stop" ]; do
    rm -f "$d/init.pid"
    systemd-nspawn -q -D "$d/root" --boot --register=no --keep-unit --console=passive \
      --link-journal=no --machine="$name" --resolv-conf=off --timezone=off </dev/null &
    echo $! >"$d/nspawn.pid"
    rc=0
    wait $! || rc=$?
    echo "$(date +%T) nspawn exited $rc" >>"$d/supervisor.log"
    [ "$rc" -eq 133 ] || [ -e "$d/restart" ] || break
    rm -f "$d/restart"
  done
}

# _fleet_init_pid NODE: the container's PID 1 as the host sees it (nspawn's child).
_fleet_init_pid() {
  local d=$FLEET_DIR/nodes/$1 p
  p=$(pgrep -P "$(cat "$d/nspawn.pid" 2>/dev/null || echo 0)" 2>/dev/null | head -1)
  [ -n "$p" ] && echo "$p" >"$d/init.pid" && echo "$p"
}

# fleet_wait NODE: until the node's systemd has finished booting and sshd answers.
fleet_wait() {
  local name=$1 end=$((SECONDS + FLEET_BOOT_TIMEOUT)) state=""
  while [ "$SECONDS" -lt "$end" ]; do
    _fleet_init_pid "$name" >/dev/null || true
    state=$(FLEET_SSH_PROBE=1 fleet_ssh "$name" systemctl is-system-running 2>/dev/null) || true
    case $state in running | degraded) return 0 ;; esac
    sleep 1
  done
  _e2e_say "$name: console:" && tail -30 "$FLEET_DIR/nodes/$name/console.log" >&"$_E2E_ERRFD" || true
  fail "$name did not finish booting within ${FLEET_BOOT_TIMEOUT}s (state '${state}')"
}

# fleet_start N: make and boot nodes n1..nN; start the watchdog first.
fleet_start() {
  local n=$1 i name
  mkdir -p "$FLEET_DIR/nodes" "$FLEET_DIR/ssh"
  # SSH's control sockets live in a short directory of their own, linked as ssh/cp: a Unix
  # socket's path has at most 107 bytes, and $E2E_TMP may be deep (ssh adds 57 to it).
  ln -s "$(mktemp -d "${FLEET_SOCKET_DIR:-/tmp}/fleet-cp.XXXXXX")" "$FLEET_DIR/ssh/cp"
  setsid bash "$FLEET_LIB_DIR/watchdog" "$FLEET_DIR" $$ "$FLEET_TIME_BOUND" </dev/null \
    >/dev/null 2>&1 &
  ssh-keygen -q -t ed25519 -N '' -C fleet-test -f "$FLEET_DIR/ssh/id_ed25519"
  : >"$FLEET_DIR/ssh/known_hosts"
  cat >"$FLEET_DIR/ssh/config" <<EOF
Host *
  User root
  IdentityFile $FLEET_DIR/ssh/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $FLEET_DIR/ssh/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 15
  ServerAliveInterval 5
  ServerAliveCountMax 12
  LogLevel ERROR
EOF
  for i in $(seq "$n"); do
    name=n$i
    FLEET_NODES+=("$name")
    FLEET_PORT[$name]=$(_fleet_free_port)
    _fleet_prepare "$name" "${FLEET_PORT[$name]}"
  done
  for name in "${FLEET_NODES[@]}"; do
    (_fleet_supervise "$name") >"$FLEET_DIR/nodes/$name/console.log" 2>&1 &
    echo $! >"$FLEET_DIR/nodes/$name/supervisor.pid"
  done
  for name in "${FLEET_NODES[@]}"; do fleet_wait "$name"; done
}

fleet_root() { echo "$FLEET_DIR/nodes/$1/root"; }

# fleet_ssh NODE CMD...: the command line is passed to the node's shell as one string.
# ssh's own messages (LogLevel VERBOSE) go to a log file of the call; when ssh itself fails
# (exit 255) its last lines, the node's supervisor log and whether the container still runs
# are said on stderr (LogLevel ERROR hides, e.g., "Timeout, server not responding").
# FLEET_SSH_PROBE=1 (the polls of a booting node, which fail until sshd answers): give up
# on a silent server after 10 s instead of 60 and say nothing about a failed connection.
fleet_ssh() {
  local name=$1 log rc=0 opts=(-o LogLevel=VERBOSE)
  shift
  [ -z "${FLEET_SSH_PROBE:-}" ] ||
    opts=(-o LogLevel=ERROR -o ConnectTimeout=5 -o ServerAliveInterval=5 -o ServerAliveCountMax=2)
  log=$(mktemp "$FLEET_DIR/ssh/log.$name.XXXXXX")
  ssh -F "$FLEET_DIR/ssh/config" "${opts[@]}" -E "$log" -p "${FLEET_PORT[$name]}" \
    127.0.0.1 "$@" || rc=$?
  if [ "$rc" -eq 255 ] && [ -z "${FLEET_SSH_PROBE:-}" ]; then
    _fleet_ssh_failed "$name" "$log" >&2
  fi
  rm -f "$log"
  return "$rc"
}

_fleet_ssh_failed() {
  local name=$1 log=$2 d=$FLEET_DIR/nodes/$1 pid
  pid=$(cat "$d/nspawn.pid" 2>/dev/null || echo 0)
  echo "fleet_ssh $name: ssh exited 255 at $(date +%T); what ssh said:"
  grep -v -e '^Authenticated' -e '^debug' "$log" | tail -8 | sed 's/^/  /'
  if kill -0 "$pid" 2>/dev/null; then
    echo "fleet_ssh $name: its systemd-nspawn (PID $pid) still runs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  else
    echo "fleet_ssh $name: its systemd-nspawn (PID $pid) is gone"
  fi
  tail -3 "$d/supervisor.log" 2>/dev/null | sed "s/^/  supervisor: /"
}

# fleet_read NODE CMD...: fleet_ssh for a read-only command, tried again (up to 3 times, 2 s
# apart) when ssh itself fails (exit 255: no connection, e.g. sshd slow to accept on a loaded
# machine). Only for commands that are safe to run twice; never for reboots or changes.
fleet_read() {
  local try rc=0
  for try in 1 2 3; do
    rc=0
    fleet_ssh "$@" && return 0 || rc=$?
    [ "$rc" -eq 255 ] || return "$rc"
    sleep 2
  done
  return "$rc"
}

# fleet_boot_id NODE: /proc/sys/kernel/random/boot_id inside the node (changes per boot).
fleet_boot_id() { fleet_ssh "$1" cat /proc/sys/kernel/random/boot_id; }

# _fleet_wait_new_boot NODE OLD_BOOT_ID: a new boot answers (nspawn gives every start of a
# container its own boot ID), and it has finished booting.
_fleet_wait_new_boot() {
  local name=$1 old=$2 end=$((SECONDS + FLEET_BOOT_TIMEOUT)) id
  while [ "$SECONDS" -lt "$end" ]; do
    id=$(FLEET_SSH_PROBE=1 fleet_boot_id "$name" 2>/dev/null) || true
    [ -z "$id" ] || [ "$id" == "$old" ] || break
    sleep 1
  done
  if [ -z "$id" ] || [ "$id" == "$old" ]; then
    # Why: the supervisor's nspawn exits, the console, and the node's own journal (persistent).
    _e2e_say "$name: supervisor:" && tail -5 "$FLEET_DIR/nodes/$name/supervisor.log" >&"$_E2E_ERRFD" 2>&1 || true
    _e2e_say "$name: console:" && tail -30 "$FLEET_DIR/nodes/$name/console.log" >&"$_E2E_ERRFD" || true
    _e2e_say "$name: journal:" &&
      journalctl -D "$FLEET_DIR/nodes/$name/root/var/log/journal" --no-pager -n 60 >&"$_E2E_ERRFD" 2>&1 || true
    fail "$name did not boot again within ${FLEET_BOOT_TIMEOUT}s"
  fi
  fleet_wait "$name"
}

# fleet_reboot NODE: `systemctl reboot` inside the node, then wait for the new boot.
fleet_reboot() {
  local old
  old=$(fleet_boot_id "$1")
  fleet_ssh "$1" systemctl reboot 2>/dev/null || true
  _fleet_wait_new_boot "$1" "$old"
}

# fleet_restart NODE: stop the container from outside (SIGTERM to nspawn: a clean power
# off) and boot it again.
fleet_restart() {
  local d=$FLEET_DIR/nodes/$1 old
  old=$(fleet_boot_id "$1")
  touch "$d/restart"
  kill -TERM "$(cat "$d/nspawn.pid")"
  _fleet_wait_new_boot "$1" "$old"
}

# fleet_inventory FILE [VARS...]: inventory of every node in group gpu over real SSH.
fleet_inventory() {
  local f=$1 name
  shift
  {
    echo "[gpu]"
    for name in "${FLEET_NODES[@]}"; do
      echo "$name ansible_host=127.0.0.1 ansible_port=${FLEET_PORT[$name]}"
    done
    echo
    echo "[gpu:vars]"
    echo "ansible_user=root"
    echo "ansible_python_interpreter=/usr/bin/python3"
    echo "ansible_ssh_private_key_file=$FLEET_DIR/ssh/id_ed25519"
    echo "ansible_ssh_common_args=-F $FLEET_DIR/ssh/config -o ControlMaster=auto -o ControlPersist=120s -o ControlPath=$(readlink "$FLEET_DIR/ssh/cp")/%C"
    printf '%s\n' "$@"
  } >"$f"
}

# fleet_stop: stop every node and remove the mounts (idempotent); fails when anything is
# left behind.
fleet_stop() {
  [ -d "$FLEET_DIR/nodes" ] || return 0
  bash "$FLEET_LIB_DIR/down" "$FLEET_DIR"
}
