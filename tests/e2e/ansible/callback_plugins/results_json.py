# SPDX-License-Identifier: Apache-2.0
# A stdout callback for the e2e suites: at the end of the run, one JSON document with every
# task's per-host result and the per-host stats, in the shape of ansible.posix.json
# ({"plays": [{"play", "tasks": [{"task": {"name"}, "hosts": {HOST: RESULT}}]}], "stats"}).
# It ships with the tests so that they need only ansible-core (Debian's `ansible-core`): the
# ansible.posix collection is in Debian's much larger `ansible` package, which CI does not install.
from __future__ import annotations

import json

from ansible.parsing.ajson import AnsibleJSONEncoder
from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: results_json
    type: stdout
    short_description: every task result and the stats as one JSON document
    description: Test-suite callback; the shape of ansible.posix.json.
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "results_json"

    def __init__(self):
        super().__init__()
        self.plays = []

    def v2_playbook_on_play_start(self, play):
        self.plays.append({"play": {"name": play.get_name()}, "tasks": []})

    def v2_playbook_on_task_start(self, task, is_conditional):
        self.plays[-1]["tasks"].append({"task": {"name": task.get_name()}, "hosts": {}})

    def v2_playbook_on_handler_task_start(self, task):
        self.v2_playbook_on_task_start(task, False)

    def _record(self, result, **extra):
        if not self.plays or not self.plays[-1]["tasks"]:
            return
        r = dict(result._result)
        r.update(extra)
        self.plays[-1]["tasks"][-1]["hosts"][result._host.get_name()] = r

    def v2_runner_on_ok(self, result, **kwargs):
        self._record(result)

    def v2_runner_on_failed(self, result, ignore_errors=False, **kwargs):
        self._record(result, failed=True)

    def v2_runner_on_unreachable(self, result, **kwargs):
        self._record(result, unreachable=True)

    def v2_runner_on_skipped(self, result, **kwargs):
        self._record(result, skipped=True)

    def v2_playbook_on_stats(self, stats):
        summary = {h: stats.summarize(h) for h in sorted(stats.processed.keys())}
        self._display.display(json.dumps({"plays": self.plays, "stats": summary},
                                         cls=AnsibleJSONEncoder, indent=2, sort_keys=True))
