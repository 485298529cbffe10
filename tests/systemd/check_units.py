#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks on cudnnctl's systemd units that `systemd-analyze verify` does not make.

    check_units.py DIR     DIR holds the units (the repo's systemd/ with *.in, or a staged
                           <DESTDIR>/usr/lib/systemd/system)

- every timer's service (Unit=, else the timer's own name) exists and has no
  RemainAfterExit=yes: such a service is started once and then stays "active", so the timer
  never starts it again (systemd.timer(5); systemd-analyze verify does not warn);
- the boot check is a oneshot with RemainAfterExit=yes, a start timeout, and Wants= (not
  Requires=) on nvidia-persistenced.service, ordered After= it;
- GPU access: no PrivateDevices=yes, DevicePolicy=closed with DeviceAllow=char-nvidia*, no
  MemoryDenyWriteExecute=yes (off by policy, docs/FLEET.md);
- the read-only units (verify, doctor) have ProtectSystem=strict and no ReadWritePaths=;
  the rollback unit may write only the prefix, the state and cache directories, /etc and
  /usr/local (the CUDA home's links: e2e systemd.bash shows a rollback needs it);
- no unit allows the network (RestrictAddressFamilies=AF_UNIX, PrivateNetwork=yes).
Prints one line per problem; exit 1 if any, else 0.
"""
import os
import sys


def parse(path):
    """{section: [(key, value)]} of a unit file (comments, continuation lines handled)."""
    sections, cur, pending = {}, None, ""
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = pending + raw.rstrip("\n")
            pending = ""
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            s = line.strip()
            if not s or s[0] in "#;":
                continue
            if s.startswith("[") and s.endswith("]"):
                cur = s[1:-1]
                sections.setdefault(cur, [])
                continue
            if "=" not in s or cur is None:
                raise SystemExit("%s: cannot parse line: %r" % (path, s))
            k, v = s.split("=", 1)
            sections[cur].append((k.strip(), v.strip()))
    return sections


def values(unit, section, key):
    return [v for k, v in unit.get(section, []) if k == key]


def last(unit, section, key, default=None):
    v = values(unit, section, key)
    return v[-1] if v else default


def yes(v):
    return v is not None and v.lower() in ("1", "yes", "true", "on")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    d = sys.argv[1]
    units = {}
    for name in sorted(os.listdir(d)):
        if not name.startswith("cudnnctl-"):
            continue
        unit_name = name[:-3] if name.endswith(".in") else name
        if unit_name.endswith((".service", ".timer")):
            units[unit_name] = parse(os.path.join(d, name))
    problems = []

    def need(cond, msg):
        if not cond:
            problems.append(msg)

    for must in ("cudnnctl-verify.service", "cudnnctl-doctor.service", "cudnnctl-doctor.timer",
                 "cudnnctl-rollback.service"):
        need(must in units, "%s: missing in %s" % (must, d))

    for name, unit in units.items():
        if name.endswith(".timer"):
            svc = last(unit, "Timer", "Unit", name[: -len(".timer")] + ".service")
            need(svc in units, "%s: starts %s, which is not in %s" % (name, svc, d))
            if svc in units:
                need(not yes(last(units[svc], "Service", "RemainAfterExit")),
                     "%s: starts %s, which has RemainAfterExit=yes: the timer would start it "
                     "only once" % (name, svc))
                need(last(units[svc], "Service", "Type") == "oneshot",
                     "%s: %s should be Type=oneshot" % (name, svc))
            need(values(unit, "Timer", "OnCalendar") or values(unit, "Timer", "OnBootSec"),
                 "%s: no OnCalendar= or OnBootSec=" % name)
            continue
        svc = unit.get("Service", [])
        need(svc, "%s: no [Service] section" % name)
        need(not yes(last(unit, "Service", "PrivateDevices")),
             "%s: PrivateDevices=yes hides /dev/nvidia*" % name)
        need(not yes(last(unit, "Service", "MemoryDenyWriteExecute")),
             "%s: MemoryDenyWriteExecute=yes is off by policy: unverified with the fleet's drivers "
             "(docs/FLEET.md); enable it with a local drop-in" % name)
        need(last(unit, "Service", "DevicePolicy") == "closed", "%s: DevicePolicy=closed missing" % name)
        need(any(v.split()[0] == "char-nvidia*" for v in values(unit, "Service", "DeviceAllow")),
             "%s: DeviceAllow=char-nvidia* rw missing (GPU access)" % name)
        need(last(unit, "Service", "RestrictAddressFamilies") == "AF_UNIX",
             "%s: RestrictAddressFamilies=AF_UNIX missing (the units need no network)" % name)
        need(yes(last(unit, "Service", "PrivateNetwork")), "%s: PrivateNetwork=yes missing" % name)
        need(yes(last(unit, "Service", "NoNewPrivileges")), "%s: NoNewPrivileges=yes missing" % name)
        need(last(unit, "Service", "ProtectSystem") == "strict", "%s: ProtectSystem=strict missing" % name)
        need(last(unit, "Service", "TimeoutStartSec") is not None,
             "%s: no TimeoutStartSec= (oneshot units have no start timeout by default)" % name)
        rw = " ".join(values(unit, "Service", "ReadWritePaths")).split()
        if name == "cudnnctl-rollback.service":
            allowed = {"/opt/cudnn", "/var/lib/cudnnctl", "/etc", "-/var/cache/cudnnctl",
                       "-/usr/local"}
            need(set(rw) <= allowed, "%s: writes more than %s: %s" % (name, sorted(allowed), rw))
            need(not values(unit, "Install", "WantedBy"),
                 "%s: must not be enabled on its own (started by OnFailure=)" % name)
        else:
            need(not rw, "%s: read-only unit has ReadWritePaths=%s" % (name, rw))

    v = units.get("cudnnctl-verify.service")
    if v:
        need(last(v, "Service", "Type") == "oneshot", "cudnnctl-verify.service: Type=oneshot missing")
        need(yes(last(v, "Service", "RemainAfterExit")),
             "cudnnctl-verify.service: RemainAfterExit=yes missing (units gate on it)")
        wants = " ".join(values(v, "Unit", "Wants")).split()
        requires = " ".join(values(v, "Unit", "Requires")).split()
        after = " ".join(values(v, "Unit", "After")).split()
        need("nvidia-persistenced.service" in wants,
             "cudnnctl-verify.service: Wants=nvidia-persistenced.service missing")
        need("nvidia-persistenced.service" not in requires,
             "cudnnctl-verify.service: Requires=nvidia-persistenced.service fails where it is absent")
        need("nvidia-persistenced.service" in after,
             "cudnnctl-verify.service: After=nvidia-persistenced.service missing")
        need("cudnnctl-rollback.service" in " ".join(values(v, "Unit", "OnFailure")).split(),
             "cudnnctl-verify.service: OnFailure=cudnnctl-rollback.service missing")
        need(any("verify" in e.split() and "--smoke" in e.split() for e in values(v, "Service", "ExecStart")),
             "cudnnctl-verify.service: ExecStart does not run verify --smoke")

    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
