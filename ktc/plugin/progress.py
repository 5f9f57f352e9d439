"""Progress events for ``ktc run``: one JSON line per event on the file descriptor ``KTC_PROGRESS_FD``
names (a pipe ``ktc run`` reads, ktc/cli/progress.py), written by the controller only.

Events: ``{"collected": {target: tests}}`` once the tests are known, then ``{"target": name,
"seconds": s, "done": bool}`` for every report of a test, ``done`` on its last (teardown) report.
The pytest child's own output goes to a log file meanwhile, so these are all a user sees while it runs.
"""

from __future__ import annotations

import json
import os

import pytest

FD_ENV = "KTC_PROGRESS_FD"


def target_of(nodeid: str, names: list[str]) -> str | None:
    """The implementation a test runs on, from its parameter id (``test_x[kafka-4.4.0-kafka-4]``):
    the longest implementation name that is a whole ``-``-separated part of it."""
    params = f"-{nodeid.rpartition('[')[2].rstrip(']')}-" if nodeid.endswith("]") else ""
    found = [n for n in names if f"-{n}-" in params]
    return max(found, key=len) if found else None


def open_stream(config):
    """The event stream, on the controller of a ``ktc run`` child; else None."""
    fd = os.environ.get(FD_ENV, "")
    if not fd.isdigit() or hasattr(config, "workerinput"):
        return None
    try:
        return os.fdopen(int(fd), "w", buffering=1)
    except OSError:
        return None


class Progress:
    """Registered by the plugin on the controller when ``ktc run`` asked for events."""

    def __init__(self, out, names: list[str]):
        self.out, self.names, self.sent_collection = out, names, False

    def emit(self, event: dict) -> None:
        if self.out is None:
            return
        try:
            self.out.write(json.dumps(event) + "\n")
        except OSError:  # ktc run went away: the run goes on and its report is still written
            self.out = None

    def collected(self, nodeids) -> None:
        counts: dict[str, int] = {}
        for target in filter(None, (target_of(n, self.names) for n in nodeids)):
            counts[target] = counts.get(target, 0) + 1
        self.sent_collection = True
        self.emit({"collected": counts})

    def pytest_collection_finish(self, session) -> None:
        if session.items:  # under pytest-xdist the controller collects nothing; the nodes tell it (below)
            self.collected([i.nodeid for i in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        if not self.sent_collection:
            self.collected(ids)

    def pytest_runtest_logreport(self, report) -> None:
        target = target_of(report.nodeid, self.names)
        if target is not None:
            self.emit({"target": target, "seconds": round(report.duration, 3), "done": report.when == "teardown"})
