#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0
# Ansible module around the cudnnctl CLI: everything it knows comes from `cudnnctl --json`.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: cudnnctl
short_description: Install, activate, roll back and remove NVIDIA cuDNN with cudnnctl
version_added: "0.1.0"
description:
  - Manages NVIDIA cuDNN on a host through the installed C(cudnnctl) command line tool, which
    resolves a release in NVIDIA's redist manifest, verifies the archive's size and SHA-256,
    installs it into an immutable store entry and switches to it as one journaled transaction.
  - Every earlier version stays one rollback away without the network, so I(state=rolled_back)
    is cheap and safe.
  - The module only calls C(cudnnctl --json) through C(run_command) and reports what the tool
    says; checksum verification, pins, locking and crash recovery happen in C(cudnnctl).
  - In check mode the module runs C(cudnnctl ... --dry-run) and the read-only C(status) and
    C(list) commands, which create no file and no directory on the host.
options:
  state:
    description:
      - C(present) makes I(version) installed and active; nothing changes when it already is.
      - C(rolled_back) switches back to the generation that was active before I(version), if
        I(version) is the active one; otherwise nothing changes, so a second run reports no
        change. It fails with the tool's message when there is nothing to roll back to.
      - C(absent) removes I(version) when it is installed and not active. It fails with the
        tool's message when I(version) is the active version (activate another one first).
      - C(query) changes nothing and returns the facts (active version, installed builds,
        generations).
    type: str
    choices: [present, absent, rolled_back, query]
    default: present
  version:
    description:
      - A release label such as C(9.1.0) or a full version such as C(9.1.0.70).
      - Required unless I(state=query).
    type: str
  cuda:
    description:
      - CUDA major of the build (C(--cuda)). Default is the host's configuration, else the
        installed CUDA toolkit's major.
      - With I(state=rolled_back) or I(state=absent) it also narrows which installed builds
        I(version) matches.
    type: int
  platform:
    description:
      - NVIDIA platform key (C(--platform)), for example C(linux-x86_64) or C(linux-sbsa).
        Default is the host's.
    type: str
  mirrors:
    description:
      - Mirror base URLs laid out like NVIDIA's redist server, tried in order (C(--mirror)).
        Default is the host's C(/etc/cudnnctl/config.toml), else NVIDIA's server.
      - Archives from mirrors are always checked against the manifest's SHA-256 and size.
    type: list
    elements: str
    default: []
  manifest:
    description:
      - A C(redistrib_<label>.json) file on the managed host, or a URL (C(--manifest)).
        A file is used as given, without a pin check.
    type: str
  prefix:
    description:
      - Install prefix inside I(root) (C(--prefix)). Default C(/opt/cudnn), or the host's
        configuration.
    type: path
  root:
    description:
      - Directory that stands for C(/) (C(--root)); everything cudnnctl manages is under it.
        Useful for images and tests.
    type: path
    default: /
  require_gpu:
    description:
      - Refuse the installation (C(rc=7)) unless a usable GPU runs the smoke test.
    type: bool
    default: false
  smoke:
    description:
      - Run the GPU smoke test after the switch (a failure rolls back, C(rc=5)). C(false)
        passes C(--no-smoke).
    type: bool
    default: true
  force:
    description:
      - Install or switch to a build that a signed recall list names, and past the CUDA
        toolkit and driver refusals and the framework gate (C(--force)); each override is a
        warning. Without it a recalled build fails the task with C(rc=7) and I(recalled).
      - The framework gate refuses a switch that would break a framework on the node (torch,
        TensorFlow, JAX, ONNX Runtime, TensorRT that load the system's cuDNN). The task then
        fails with C(rc=7), I(error_code=framework_incompatible), cudnnctl's message (each
        framework, its path, what it was built for, what it would load, and a release that
        serves them all) and I(frameworks). In check mode the C(--dry-run) predicts the same
        failure. I(force=true) is the override; the switch happens and the warning says what
        breaks.
    type: bool
    default: false
  require_pin:
    description:
      - Refuse manifests that have no pin (C(--require-pin)). Site pins live in
        C(/etc/cudnnctl/pins.d/); C(cudnnctl mirror) writes them for what it mirrors.
    type: bool
    default: false
  components:
    description:
      - Parts of the release to install (C(--components)). Default C(runtime) and C(headers).
    type: list
    elements: str
    choices: [runtime, headers, static]
  keep_generations:
    description:
      - After I(state=present) changed something, run C(cudnnctl gc --keep N), which keeps the
        active generation and the N-1 generations C(rollback) would walk back to, and deletes
        the other generations and the store entries none of them uses.
      - Not run after I(state=rolled_back) or I(state=absent), where it would delete the version
        just rolled back from.
      - Keep at least 2 to keep a rollback target.
    type: int
  cacert:
    description:
      - CA bundle on the managed host for HTTPS mirrors (C(--cacert)); it replaces the system
        trust store.
    type: path
  lock_timeout:
    description:
      - Seconds to wait for another cudnnctl holding the lock (C(--lock-timeout)); busy past
        it fails with C(rc=6). Default 300, or the host's configuration.
    type: float
  cudnnctl_path:
    description:
      - The cudnnctl executable on the managed host. A bare name is looked up in C(PATH),
        C(/usr/local/bin) and C(/usr/bin).
    type: str
    default: cudnnctl
attributes:
  check_mode:
    support: full
    description: Plans with C(cudnnctl --dry-run), C(status) and C(list), which write nothing.
  diff_mode:
    support: full
    description: Before and after are the active version and generation.
  platform:
    platforms: posix
notes:
  - C(cudnnctl) must be installed on the managed host (see the C(cudnn) role).
  - Exit codes of C(cudnnctl) are returned as I(rc) on failure (1 environment, 2 usage or bad
    input (for example removing the active version), 3 download failed on every mirror,
    4 integrity (checksum, pin, unsafe archive), 5 failed after the switch and rolled back,
    6 busy, 7 refused by a requirement or a signed recall list).
  - I(previous_version) and I(previous_generation) describe what was active before the task
    ran; I(rollback_version) and I(rollback_generation) what C(cudnnctl rollback) would switch
    to now.
requirements:
  - cudnnctl on the managed host
seealso:
  - name: cudnnctl README
    description: The command line tool, its JSON output and its exit codes.
    link: https://github.com/cudnnctl/cudnnctl
author:
  - cudnnctl developers
"""

EXAMPLES = r"""
- name: Ensure cuDNN 9.1.0 for CUDA 12 is installed and active
  cudnnctl:
    version: "9.1.0"
    cuda: 12
    mirrors:
      - http://mirror.internal/cudnn/redist/
    require_pin: true
    keep_generations: 3
  register: cudnn

- name: Show what changed
  ansible.builtin.debug:
    msg: "cuDNN {{ cudnn.previous_version }} -> {{ cudnn.version }} (generation {{ cudnn.generation }})"
  when: cudnn is changed

- name: Roll back if 9.27.0 is the active version (no network needed)
  cudnnctl:
    version: "9.27.0"
    state: rolled_back

- name: Remove an old version (never the active one)
  cudnnctl:
    version: "8.9.7"
    state: absent

- name: Facts only
  cudnnctl:
    state: query
  register: cudnn_facts

- name: Install into an image being built under /srv/image
  cudnnctl:
    version: "9.1.0.70"
    cuda: 12
    root: /srv/image
    smoke: false
"""

RETURN = r"""
changed:
  description: Whether the task changed the host (in check mode, whether it would).
  returned: always
  type: bool
version:
  description: Full version of the active cuDNN after the task (in check mode, the version that
    would be active), or null when none is.
  returned: always
  type: str
  sample: 9.1.0.70
generation:
  description: Active generation after the task; null when none is, and in check mode when a
    new generation would be created (its number is chosen when the change runs).
  returned: always
  type: int
  sample: 2
previous_version:
  description: Full version of the cuDNN that was active before the task ran, or null.
  returned: always
  type: str
  sample: 8.9.7.29
previous_generation:
  description: Generation that was active before the task ran, or null.
  returned: always
  type: int
  sample: 1
rollback_available:
  description: Whether C(cudnnctl rollback) has a generation to switch back to after the task.
  returned: always
  type: bool
rollback_version:
  description: Full version C(cudnnctl rollback) would switch to after the task, or null.
  returned: always
  type: str
rollback_generation:
  description: Generation C(cudnnctl rollback) would switch to after the task, or null.
  returned: always
  type: int
active:
  description: The active generation after the task as C(cudnnctl --json) describes it.
  returned: always
  type: dict
  contains:
    version: {description: Full version, type: str}
    cuda: {description: CUDA major of the build, type: int}
    platform: {description: Platform key, type: str}
    generation: {description: Generation number, type: int}
    path: {description: Store entry of the generation, type: str}
actions:
  description: What cudnnctl did (or, in check mode, would do), one line each.
  returned: always
  type: list
  elements: str
  sample: ["downloaded and verified cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz",
           "activated generation 1 (9.1.0.70-cuda12-linux-x86_64)"]
installed:
  description: Installed builds (C(cudnnctl list --json) C(data.installed)).
  returned: when I(state=query)
  type: list
  elements: dict
generations:
  description: Generations (C(cudnnctl list --json) C(data.generations)).
  returned: when I(state=query)
  type: list
  elements: dict
interrupted_transaction:
  description: Whether an interrupted transaction waits for C(cudnnctl recover).
  returned: when I(state=query)
  type: bool
recalled:
  description: The signed recall list entry that names the build the task installed or
    found active (with I(force)), or, on failure, the build it refused; null when none does.
    Recall lists live in C(/etc/cudnnctl/recalls.d/) (or on the mirror, with
    C(recalls_from_mirror = true)).
  returned: always, and on failure when a recall refused the build
  type: dict
  contains:
    version: {description: The release or build the list names, type: str}
    cuda: {description: The CUDA major it is limited to, or null, type: int}
    reason: {description: Why it is recalled, type: str}
    url: {description: Where to read more, type: str}
    list: {description: The list it comes from, type: str}
frameworks:
  description: The framework gate's verdict on each framework found on the node, when a switch
    was refused (C(error_code=framework_incompatible)).
  returned: on failure when the framework gate ran
  type: list
  elements: dict
  contains:
    name: {description: torch, tensorflow, jax, onnxruntime or tensorrt, type: str}
    version: {description: The framework's version, type: str}
    path: {description: Its site-packages (TensorRT, its library directory), type: str}
    built_for: {description: The cuDNN it was built for, type: str}
    would_load: {description: What it would load after the switch, type: str}
    verdict: {description: ok, breaks, own-copy or unaffected, type: str}
rc:
  description: Exit code of the cudnnctl command that failed.
  returned: failure
  type: int
  sample: 4
error_code:
  description: cudnnctl's error class (C(integrity), C(usage), C(network), ...).
  returned: failure
  type: str
  sample: integrity
cmd:
  description: The cudnnctl command line that failed.
  returned: failure
  type: list
  elements: str
stderr:
  description: Standard error of the cudnnctl command that failed.
  returned: failure
  type: str
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule


class CudnnctlError(Exception):
    """A cudnnctl command failed; carries what fail_json reports."""

    def __init__(self, msg, **details):
        super(CudnnctlError, self).__init__(msg)
        self.msg = msg
        self.details = details


class Cli(object):
    """Runs `cudnnctl --json <global options> COMMAND ...` and returns the parsed object."""

    def __init__(self, module):
        self.module = module
        p = module.params
        path = p["cudnnctl_path"]
        if "/" in path:
            exe = path
            if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
                module.fail_json(msg="%s is not an executable: install cudnnctl first, or set "
                                     "cudnnctl_path" % path)
        else:
            exe = module.get_bin_path(path, required=False, opt_dirs=["/usr/local/bin", "/usr/bin"])
            if not exe:
                module.fail_json(msg="cannot find %s in PATH, /usr/local/bin or /usr/bin: install "
                                     "cudnnctl first, or set cudnnctl_path" % path)
        self.globals = [exe, "--json", "--root", p["root"]]
        if p["prefix"]:
            self.globals += ["--prefix", p["prefix"]]
        for m in p["mirrors"] or []:
            self.globals += ["--mirror", m]
        if p["manifest"]:
            self.globals += ["--manifest", p["manifest"]]
        if p["cuda"] is not None:
            self.globals += ["--cuda", str(p["cuda"])]
        if p["platform"]:
            self.globals += ["--platform", p["platform"]]
        if p["cacert"]:
            self.globals += ["--cacert", p["cacert"]]
        if p["lock_timeout"] is not None:
            self.globals += ["--lock-timeout", repr(float(p["lock_timeout"]))]
        if p["require_pin"]:
            self.globals.append("--require-pin")
        if p["force"]:
            self.globals.append("--force")
        self.warnings = []

    def __call__(self, *args):
        cmd = self.globals + list(args)
        rc, out, err = self.module.run_command(cmd, check_rc=False)
        try:
            result = json.loads(out)
            if not isinstance(result, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            raise CudnnctlError("cudnnctl printed no JSON object (exit %d): %s" % (rc, (err or out).strip() or e),
                                rc=rc, cmd=cmd, stdout=out, stderr=err)
        for w in result.get("warnings") or []:
            if w not in self.warnings:
                self.warnings.append(w)
        if rc != 0 or not result.get("ok", False):
            error = result.get("error") or {}
            details = dict(rc=rc if rc != 0 else 1, error_code=error.get("code"), cmd=cmd,
                           stderr=err, actions=result.get("actions") or [])
            recalled = (result.get("data") or {}).get("recalled")
            if recalled:
                details["recalled"] = recalled
            frameworks = (result.get("data") or {}).get("frameworks")
            if frameworks:
                details["frameworks"] = frameworks
            raise CudnnctlError(error.get("message") or "cudnnctl failed with exit %d" % rc, **details)
        return result


def version_matches(wanted, version, label=None):
    """True when `wanted` (9.1.0, 9.1.0.70, 9.1) names `version` (9.1.0.70) or its label."""
    if label is not None and wanted == label:
        return True
    w = wanted.split(".")
    return version.split(".")[: len(w)] == w


def build_matches(params, build, label=None):
    """Whether an active or installed build (a dict with version, cuda, platform) matches the
    module's version, cuda and platform, the way `cudnnctl remove` and `use` match."""
    if not build or not version_matches(params["version"], build["version"], label):
        return False
    if params["cuda"] is not None and build.get("cuda") != params["cuda"]:
        return False
    if params["platform"] and build.get("platform") != params["platform"]:
        return False
    return True


def describe(gen, new_generation=False):
    if not gen:
        return "none\n"
    if new_generation:
        return "version %s (new generation)\n" % gen["version"]
    return "version %s (generation %d)\n" % (gen["version"], gen["generation"])


def field(gen, key):
    return gen.get(key) if gen else None


def rollback_target(listing, current, removed=()):
    """What `cudnnctl rollback` would switch to from generation `current` (the parent, else the
    nearest lower generation), from `list --json` data, ignoring generations in `removed`.
    Mirrors store::rollback_target; used only to predict it in check mode."""
    if current is None:
        return None
    data = listing.get("data") or {}
    gens = dict((g["generation"], g) for g in data.get("generations", []) if g["generation"] not in removed)
    parent = (gens.get(current) or {}).get("parent")
    if parent is not None and parent != current and parent in gens:
        target = parent
    else:
        lower = [n for n in gens if n < current]
        target = max(lower) if lower else None
    if target is None:
        return None
    for e in data.get("installed", []):
        if e.get("entry") == gens[target].get("entry"):
            return dict(version=e["version"], cuda=e["cuda"], platform=e["platform"],
                        generation=target, path=e.get("path"))
    return None


def run_module():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", default="present", choices=["present", "absent", "rolled_back", "query"]),
            version=dict(type="str"),
            cuda=dict(type="int"),
            platform=dict(type="str"),
            mirrors=dict(type="list", elements="str", default=[]),
            manifest=dict(type="str"),
            prefix=dict(type="path"),
            root=dict(type="path", default="/"),
            require_gpu=dict(type="bool", default=False),
            smoke=dict(type="bool", default=True),
            require_pin=dict(type="bool", default=False),
            force=dict(type="bool", default=False),
            components=dict(type="list", elements="str", choices=["runtime", "headers", "static"]),
            keep_generations=dict(type="int"),
            cacert=dict(type="path"),
            lock_timeout=dict(type="float"),
            cudnnctl_path=dict(type="str", default="cudnnctl"),
        ),
        required_if=[
            ("state", "present", ["version"]),
            ("state", "absent", ["version"]),
            ("state", "rolled_back", ["version"]),
        ],
        supports_check_mode=True,
    )
    p = module.params
    if p["keep_generations"] is not None and p["keep_generations"] < 1:
        module.fail_json(msg="keep_generations must be at least 1 (the active generation is always kept)")
    cli = Cli(module)
    check = module.check_mode
    dry = ["--dry-run"] if check else []
    result = dict(changed=False, actions=[], recalled=None)
    diff = None

    try:
        # Before: read-only, creates nothing on the host.
        before = cli("status")
        before_active = before.get("active")
        after_active = before_active
        rollback_to = before.get("previous")
        new_generation = False
        res = None

        if p["state"] == "query":
            listing = cli("list")
            data = listing.get("data") or {}
            result.update(installed=data.get("installed", []), generations=data.get("generations", []),
                          interrupted_transaction=(before.get("data") or {}).get("interrupted_transaction", False))

        elif p["state"] == "present":
            args = ["install", p["version"]] + dry
            if p["components"]:
                args += ["--components", ",".join(p["components"])]
            if not p["smoke"]:
                args.append("--no-smoke")
            if p["require_gpu"]:
                args.append("--require-gpu")
            res = cli(*args)
            result["recalled"] = (res.get("data") or {}).get("recalled")
            if check and res.get("changed"):
                # Nothing ran: the build comes from the plan; the generation number is chosen
                # when the change runs, and its parent is what is active now.
                data = res.get("data") or {}
                archive = data.get("archive") or {}
                after_active = dict(version=data.get("version") or archive.get("version") or p["version"],
                                    cuda=archive.get("cuda"), platform=archive.get("platform"),
                                    generation=None, path=None)
                new_generation = True
                rollback_to = before_active
            else:
                after_active = res.get("active")

        elif p["state"] == "rolled_back":
            if build_matches(p, before_active):
                res = cli(*(["rollback"] + dry))
                if check and res.get("changed"):
                    after_active = res.get("previous")
                    rollback_to = rollback_target(cli("list"), after_active["generation"])
                else:
                    after_active = res.get("active")

        elif p["state"] == "absent":
            listing = cli("list")
            installed = (listing.get("data") or {}).get("installed", [])
            matching = [b for b in installed if build_matches(p, b, b.get("label"))]
            if matching:
                # Also when one of them is active: cudnnctl refuses with its own message.
                res = cli(*(["remove", p["version"]] + dry))
                if check and res.get("changed"):
                    removed = set((res.get("data") or {}).get("removed_generations") or [])
                    rollback_to = rollback_target(listing, field(before_active, "generation"), removed)
            diff = dict(before_header="installed builds matching %s" % p["version"],
                        after_header="installed builds matching %s" % p["version"],
                        before="".join("%s (CUDA %s, %s)\n" % (b["version"], b["cuda"], b["platform"])
                                       for b in matching),
                        after="")
            if not (res and res.get("changed")):
                diff["after"] = diff["before"]

        if res is not None:
            result["changed"] = bool(res.get("changed"))
            result["actions"] += res.get("actions") or []

        # gc only after an install: after a rollback it would delete what was rolled back from.
        collect = p["keep_generations"] is not None and p["state"] == "present"
        if result["changed"] and not check:
            if collect:
                gc = cli("gc", "--keep", str(p["keep_generations"]))
                result["actions"] += gc.get("actions") or []
            # After: one fresh read, so that every returned value describes the same state.
            after = cli("status")
            after_active = after.get("active")
            rollback_to = after.get("previous")
        elif result["changed"] and collect:
            result["actions"].append("would run gc --keep %d" % p["keep_generations"])
    except CudnnctlError as e:
        module.fail_json(msg=e.msg, cudnnctl_warnings=cli.warnings, **e.details)

    for w in cli.warnings:
        module.warn(w)
    result.update(
        version=field(after_active, "version"),
        generation=field(after_active, "generation"),
        previous_version=field(before_active, "version"),
        previous_generation=field(before_active, "generation"),
        rollback_available=rollback_to is not None,
        rollback_version=field(rollback_to, "version"),
        rollback_generation=field(rollback_to, "generation"),
        active=after_active,
    )
    if module._diff:
        if diff is None:
            where = "active cuDNN (root %s%s)" % (p["root"], ", prefix " + p["prefix"] if p["prefix"] else "")
            diff = dict(before_header=where, after_header=where,
                        before=describe(before_active), after=describe(after_active, new_generation))
        if result["actions"]:
            diff["prepared"] = "\n".join(result["actions"]) + "\n"
        result["diff"] = diff
    module.exit_json(**result)


def main():
    run_module()


if __name__ == "__main__":
    main()
