"""The controller keeps one record per target (ktc/plugin/state.py ``Collected``): the latest, except that a
record from a worker that never called the target's run() (its tests all skipped, so it never started it) does not
replace one from a worker that ran it -- the container tier's answer once read "ktc/kafka:?" and "the
host's clock" that way, though its broker ran in ktc/kafka on the clock ktc sets."""

from __future__ import annotations

import json

from ktc.plugin.state import TARGET_KEY, Collected


class Report:
    def __init__(self, ran: bool, target: dict):
        self.nodeid, self.duration = "suites/x.py::test[kafka-container]", 0.0
        self.user_properties = [(TARGET_KEY, json.dumps({"ran": ran, "target": target}))]
        self.when, self.outcome, self.longrepr = "call", "passed", None


def record(clock: str) -> dict:
    return {"implementation": "kafka-container", "clock": clock}


def kept_after(*shipped: tuple[bool, str]) -> str:
    collected = Collected(["kafka-container"])
    for ran, clock in shipped:
        collected.take_target(ran, record(clock))
    return collected.targets["kafka-container"]["clock"]


def test_a_record_from_a_worker_that_never_ran_the_target_does_not_replace_one_that_did():
    assert kept_after((True, "controlled"), (False, "host")) == "controlled"


def test_a_later_record_from_a_run_replaces_an_earlier_one():
    assert kept_after((False, "host"), (True, "controlled")) == "controlled"
    assert kept_after((True, "controlled"), (True, "controlled, 2 checks")) == "controlled, 2 checks"


def test_a_target_no_worker_ran_keeps_its_latest_record():
    assert kept_after((False, "host"), (False, "not run: no engine")) == "not run: no engine"


def test_the_records_travel_in_a_reports_user_properties():
    collected = Collected(["kafka-container"])
    collected.pytest_runtest_logreport(Report(True, record("controlled")))
    collected.pytest_runtest_logreport(Report(False, record("host")))
    assert collected.targets["kafka-container"]["clock"] == "controlled"
