#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Invariant checker for the crash tests: "old or new, never a mix, nothing lost".

    crash_check.py ROOT [--prefix /opt/cudnn] [--allowed A,B] [--clean] [--loader]
                   [--history-count N] [--last RESULT[|RESULT...]] [--last-command CMD]
                   [--last-from GEN|none] [--last-to GEN|none|any]
                   [--record IDX:RESULT:COMMAND:FROM:TO]... [--slot S [--slot-allowed A,B]]

Reads only. Checks, independently of cudnnctl (it parses the on-disk layout itself):
  (a) `<prefix>/current` is absent or exactly `generations/<N>`, and N (or "none") is one
      of --allowed;
  (a') every `<prefix>/slots/<S>` pointer (the non-primary slots) is exactly
      `../generations/<N>` naming an existing generation; with --slot S, N (or "none") is one
      of --slot-allowed, printed as `slot=<N|none>` before the current line;
  (b) every store entry under its real name (not only the active one) matches its
      .cudnnctl-entry.json exactly: each file's size, mode and sha256, each symlink's text,
      each directory, and nothing else in the tree. Every generation link names an
      existing entry, so nothing that was published is half there;
  (c) with --clean: no .staging-*, .trash-*, *.tmp.* temporaries, no journal, no
      generation metadata without its link (or link without metadata), no store entry that
      no generation uses;
  (d) with --history-count/--last*: history.jsonl has that many records and the last one
      says what happened;
  (e) with --loader: the drop-in names the active entry's lib/, then one entry per other
      cuDNN major active in a slot (or is absent with no active generation), and `ldconfig -r
      ROOT -p` resolves libcudnn.so.<major> into that entry (and each slot's major into the
      store).
Prints `current=<N|none>` and exits 0, or prints every violated invariant and exits 1.
"""
import argparse
import hashlib
import json
import os
import re
import stat
import subprocess
import sys

problems = []


def bad(msg):
    problems.append(msg)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def check_entry(store, name):
    d = os.path.join(store, name)
    meta_path = os.path.join(d, ".cudnnctl-entry.json")
    try:
        with open(meta_path) as f:
            meta = json.load(f)
    except Exception as e:  # noqa: BLE001 - any failure is a finding
        bad("entry %s: unreadable metadata: %s" % (name, e))
        return None
    recorded = set()
    for rec in meta.get("files", []):
        rel = rec["path"]
        recorded.add(rel)
        p = os.path.join(d, rel)
        try:
            st = os.lstat(p)
        except OSError:
            bad("entry %s: %s is missing" % (name, rel))
            continue
        kind = rec.get("kind")
        if kind == "file":
            if not stat.S_ISREG(st.st_mode):
                bad("entry %s: %s is not a regular file" % (name, rel))
                continue
            if st.st_size != rec.get("size"):
                bad("entry %s: %s has %d bytes, recorded %s" % (name, rel, st.st_size, rec.get("size")))
            if sha256(p) != rec.get("sha256"):
                bad("entry %s: %s sha256 differs from the record" % (name, rel))
            if "mode" in rec and stat.S_IMODE(st.st_mode) != rec["mode"]:
                bad("entry %s: %s mode %o, recorded %o" % (name, rel, stat.S_IMODE(st.st_mode), rec["mode"]))
            if st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                bad("entry %s: %s is setuid/setgid" % (name, rel))
        elif kind == "symlink":
            if not stat.S_ISLNK(st.st_mode):
                bad("entry %s: %s is not a symlink" % (name, rel))
            elif os.readlink(p) != rec.get("target"):
                bad("entry %s: %s -> %s, recorded %s" % (name, rel, os.readlink(p), rec.get("target")))
        elif kind == "dir":
            if not stat.S_ISDIR(st.st_mode):
                bad("entry %s: %s is not a directory" % (name, rel))
        else:
            bad("entry %s: %s has unknown kind %r" % (name, rel, kind))
    for base, dirs, files in os.walk(d):
        for n in dirs + files:
            rel = os.path.relpath(os.path.join(base, n), d)
            if rel == ".cudnnctl-entry.json":
                continue
            if rel not in recorded:
                bad("entry %s: %s is not in the record" % (name, rel))
    return meta


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--prefix", default="/opt/cudnn")
    ap.add_argument("--allowed", default=None)
    ap.add_argument("--clean", action="store_true")
    ap.add_argument("--loader", action="store_true")
    ap.add_argument("--slot", default=None)
    ap.add_argument("--slot-allowed", default=None)
    ap.add_argument("--history-count", type=int, default=None)
    ap.add_argument("--last", default=None)
    ap.add_argument("--last-command", default=None)
    ap.add_argument("--last-from", default=None)
    ap.add_argument("--last-to", default=None)
    # a record by index (negative from the end); each field may be empty (any) or hold
    # alternatives separated by '|'
    ap.add_argument("--record", action="append", default=[])
    a = ap.parse_args()

    root = a.root
    prefix = os.path.join(root, a.prefix.lstrip("/"))
    store = os.path.join(prefix, "store")
    gens_dir = os.path.join(prefix, "generations")
    state = os.path.join(root, "var/lib/cudnnctl")
    cache = os.path.join(root, "var/cache/cudnnctl")
    dropin_dir = os.path.join(root, "etc/ld.so.conf.d")
    dropin = os.path.join(dropin_dir, "00-cudnnctl.conf")

    # (a) current
    cur_link = os.path.join(prefix, "current")
    current = None
    if os.path.lexists(cur_link):
        if not os.path.islink(cur_link):
            bad("current is not a symlink")
        else:
            t = os.readlink(cur_link)
            m = re.fullmatch(r"generations/([1-9][0-9]*)", t)
            if not m:
                bad("current -> %s, not generations/<N>" % t)
            else:
                current = int(m.group(1))
    cur_s = "none" if current is None else str(current)
    if a.allowed is not None and cur_s not in a.allowed.split(","):
        bad("current is %s, allowed only %s (a state that is neither old nor new)" % (cur_s, a.allowed))

    # generations
    gens = {}
    metas = set()
    if os.path.isdir(gens_dir):
        for n in os.listdir(gens_dir):
            p = os.path.join(gens_dir, n)
            if re.fullmatch(r"[1-9][0-9]*", n):
                if not os.path.islink(p):
                    bad("generations/%s is not a symlink" % n)
                    continue
                t = os.readlink(p)
                m = re.fullmatch(r"\.\./store/([^/]+)", t)
                if not m:
                    bad("generations/%s -> %s, not ../store/<entry>" % (n, t))
                    continue
                gens[int(n)] = m.group(1)
            elif re.fullmatch(r"[1-9][0-9]*\.json", n):
                metas.add(int(n[:-5]))
    if current is not None and current not in gens:
        bad("current names generation %d, which does not exist" % current)

    # (a') the non-primary slots' pointers: <prefix>/slots/<slot> -> ../generations/<N>
    slots = {}
    slots_dir = os.path.join(prefix, "slots")
    if os.path.isdir(slots_dir):
        for n in sorted(os.listdir(slots_dir)):
            p = os.path.join(slots_dir, n)
            if not re.fullmatch(r"[0-9]+-cuda[0-9]+", n):
                if a.clean and re.fullmatch(r".*\.tmp\..*", n):
                    bad("leftover %s" % p)
                continue
            if not os.path.islink(p):
                bad("slots/%s is not a symlink" % n)
                continue
            m = re.fullmatch(r"\.\./generations/([1-9][0-9]*)", os.readlink(p))
            if not m:
                bad("slots/%s -> %s, not ../generations/<N>" % (n, os.readlink(p)))
                continue
            slots[n] = int(m.group(1))
            if slots[n] not in gens:
                bad("slots/%s names generation %d, which does not exist" % (n, slots[n]))
    slot_s = None
    if a.slot is not None:
        slot_s = str(slots[a.slot]) if a.slot in slots else "none"
        if a.slot_allowed is not None and slot_s not in a.slot_allowed.split(","):
            bad("slot %s is %s, allowed only %s (a state that is neither old nor new)" % (
                a.slot, slot_s, a.slot_allowed))

    # (b) every published entry is complete; every generation names one
    entries = {}
    if os.path.isdir(store):
        for n in sorted(os.listdir(store)):
            if n.startswith("."):
                continue
            p = os.path.join(store, n)
            if os.path.islink(p) or not os.path.isdir(p):
                bad("store/%s is not a directory" % n)
                continue
            entries[n] = check_entry(store, n)
    for g, e in sorted(gens.items()):
        if e not in entries:
            bad("generation %d names store entry %s, which does not exist" % (g, e))
    active_entry = gens.get(current) if current is not None else None

    # (c) nothing left behind
    if a.clean:
        tmp = re.compile(r".*\.tmp\..*")
        for d in (prefix, store, gens_dir, state, cache, dropin_dir):
            if not os.path.isdir(d):
                continue
            for n in os.listdir(d):
                if n.startswith(".staging-") or n.startswith(".trash-") or tmp.fullmatch(n):
                    bad("leftover %s" % os.path.join(d, n))
        if os.path.lexists(os.path.join(state, "journal.json")):
            bad("the journal is still there")
        for g in sorted(metas - set(gens)):
            bad("generations/%d.json without its link" % g)
        for g in sorted(set(gens) - metas):
            bad("generations/%d without its metadata" % g)
        used = set(gens.values())
        for e in sorted(set(entries) - used):
            bad("store entry %s is used by no generation (orphan)" % e)

    # (d) history
    hist_path = os.path.join(state, "history.jsonl")
    records = []
    if os.path.exists(hist_path):
        with open(hist_path) as f:
            for i, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    records.append(json.loads(line))
                except ValueError:
                    bad("history line %d is not JSON (torn record)" % i)
    if a.history_count is not None and len(records) != a.history_count:
        bad("history has %d records, expected %d: %s" % (
            len(records), a.history_count,
            " / ".join("%s %s" % (r.get("command"), r.get("result")) for r in records[-4:])))
    if records and (a.last or a.last_command or a.last_from or a.last_to):
        r = records[-1]
        if a.last and r.get("result") not in a.last.split("|"):
            bad("last history record says %r, expected %s" % (r.get("result"), a.last))
        if a.last_command and r.get("command") != a.last_command:
            bad("last history record is for %r, expected %r" % (r.get("command"), a.last_command))

        def gen_of(x):
            return "none" if not isinstance(x, dict) else str(x.get("generation"))
        if a.last_from and gen_of(r.get("from")) != a.last_from:
            bad("last history record: from %s, expected %s" % (gen_of(r.get("from")), a.last_from))
        if a.last_to and a.last_to != "any" and gen_of(r.get("to")) not in a.last_to.split("|"):
            bad("last history record: to %s, expected %s" % (gen_of(r.get("to")), a.last_to))
    elif a.last and not records:
        bad("history is empty, expected a %s record" % a.last)
    for spec in a.record:
        idx, result, command, frm, to = (spec.split(":") + [""] * 5)[:5]
        try:
            r = records[int(idx)]
        except IndexError:
            bad("history has no record %s (%d records)" % (idx, len(records)))
            continue

        def gen_ref(x):
            return "none" if not isinstance(x, dict) else str(x.get("generation"))
        for name, want, got in (("result", result, r.get("result")),
                                ("command", command, r.get("command")),
                                ("from", frm, gen_ref(r.get("from"))),
                                ("to", to, gen_ref(r.get("to")))):
            if want and got not in want.split("|"):
                bad("history record %s: %s is %s, expected %s" % (idx, name, got, want))

    # (e) loader
    if a.loader:
        if active_entry is None:
            if os.path.lexists(dropin):
                bad("no active generation, but the drop-in exists")
        else:
            want = "/" + a.prefix.strip("/") + "/store/" + active_entry + "/lib"
            try:
                lines = [l.strip() for l in open(dropin) if l.strip() and not l.startswith("#")]
            except OSError as e:
                lines = None
                bad("drop-in unreadable: %s" % e)
            # one entry per cuDNN major: the primary slot's first, then the other slots'
            # (a major the primary has, or one another slot already gave, is not repeated)
            wants = [want]
            majors = {str((entries.get(active_entry) or {}).get("version", "")).split(".")[0]}
            for n, g in sorted(slots.items(), key=lambda kv: -int(kv[0].split("-")[0])):
                e = gens.get(g)
                mj = n.split("-")[0]
                if e and mj not in majors:
                    majors.add(mj)
                    wants.append("/" + a.prefix.strip("/") + "/store/" + e + "/lib")
            if lines is not None and lines != wants:
                bad("drop-in names %s, expected %s" % (lines, wants))
        major = None
        if active_entry and entries.get(active_entry):
            major = str(entries[active_entry].get("version", "")).split(".")[0]
        p = subprocess.run(["ldconfig", "-r", root, "-p"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        found = {}
        for line in p.stdout.splitlines():
            m = re.match(r"\s*(libcudnn\.so\.\d+) \(.*\) => (\S+)$", line)
            if m and m.group(1) not in found:
                found[m.group(1)] = m.group(2)
        if major is not None:
            so = "libcudnn.so." + major
            want = "/" + a.prefix.strip("/") + "/store/" + active_entry + "/lib/" + so
            if found.get(so) != want:
                bad("ldconfig -r resolves %s to %s, expected %s" % (so, found.get(so), want))
            for n, g in slots.items():
                mj = n.split("-")[0]
                if mj == major or not gens.get(g):
                    continue
                so = "libcudnn.so." + mj
                if not (found.get(so) or "").startswith("/" + a.prefix.strip("/") + "/store/"):
                    bad("ldconfig -r resolves %s (slot %s) to %s, not a store entry" % (
                        so, n, found.get(so)))
        elif active_entry is None:
            for so, path in found.items():
                if path.startswith("/" + a.prefix.strip("/") + "/"):
                    bad("no active generation, but the ld.so cache still maps %s to %s" % (so, path))

    if slot_s is not None:
        print("slot=%s" % slot_s)
    print("current=%s" % cur_s)
    if problems:
        for p in problems:
            print("INVARIANT: " + p, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
