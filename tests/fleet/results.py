#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads the results_json document of an ansible-playbook run (tests/e2e/ansible/).

    results.py summary RUN.json          one JSON object: batches (hosts of each serial
                                         batch, in order), stats, changed (per host, per task)
    results.py same-plan CHECK.json APPLY.json
                                         exit 0 when the check run predicted the apply run:
                                         per host the same tasks changed, the same stats, the
                                         same module versions and diffs (a new generation's
                                         number is only known when it runs); else the
                                         differences, exit 1
"""
import json
import re
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def task_results(doc):
    """[(host, task name, result)] in run order."""
    out = []
    for play in doc["plays"]:
        for task in play["tasks"]:
            for host, res in task["hosts"].items():
                out.append((host, task["task"]["name"], res))
    return out


def summary(doc):
    batches = []
    for play in doc["plays"]:
        hosts = []
        for task in play["tasks"]:
            for h in task["hosts"]:
                if h not in hosts:
                    hosts.append(h)
        batches.append(sorted(hosts, key=lambda h: (len(h), h)))
    changed = {}
    for host, name, res in task_results(doc):
        changed.setdefault(host, {})[name] = bool(res.get("changed")) and not res.get("skipped")
    return {"batches": batches, "stats": doc["stats"], "changed": changed}


def module_view(res):
    """What the cudnnctl module said, with the generation number of a new generation
    (chosen when the change runs) taken out."""
    diff = res.get("diff") or {}
    after = re.sub(r"\((new generation|generation \d+)\)", "(generation)", diff.get("after", ""))
    return {"changed": res.get("changed"), "version": res.get("version"),
            "previous_version": res.get("previous_version"), "failed": res.get("failed", False),
            "before": diff.get("before"), "after": after}


def same_plan(check, apply):
    problems = []
    sc, sa = summary(check), summary(apply)
    for host in sorted(set(sc["changed"]) | set(sa["changed"])):
        c, a = sc["changed"].get(host, {}), sa["changed"].get(host, {})
        for task in sorted(set(c) | set(a)):
            if c.get(task) != a.get(task):
                problems.append("%s: task %r: check said changed=%s, apply changed=%s"
                                % (host, task, c.get(task), a.get(task)))
        for key in ("changed", "failures", "unreachable"):
            if sc["stats"].get(host, {}).get(key) != sa["stats"].get(host, {}).get(key):
                problems.append("%s: stats %s: check %s, apply %s" % (
                    host, key, sc["stats"].get(host, {}).get(key), sa["stats"].get(host, {}).get(key)))
    mc = {h: module_view(r) for h, n, r in task_results(check) if n.split(" : ")[-1].startswith("cuDNN ")}
    ma = {h: module_view(r) for h, n, r in task_results(apply) if n.split(" : ")[-1].startswith("cuDNN ")}
    if set(mc) != set(ma):
        problems.append("the cuDNN task ran on %s in check mode, on %s when applied" % (sorted(mc), sorted(ma)))
    for host in sorted(set(mc) & set(ma)):
        if mc[host] != ma[host]:
            problems.append("%s: module: check %s, apply %s" % (host, mc[host], ma[host]))
    if sc["batches"] != sa["batches"]:
        problems.append("batches: check %s, apply %s" % (sc["batches"], sa["batches"]))
    return problems


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "summary":
        print(json.dumps(summary(load(sys.argv[2])), sort_keys=True))
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "same-plan":
        problems = same_plan(load(sys.argv[2]), load(sys.argv[3]))
        print("\n".join(problems))
        return 1 if problems else 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
