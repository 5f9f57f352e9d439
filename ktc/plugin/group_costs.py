"""What each ``xdist_group`` costs: the worker-seconds of ktc's own CI, by which groups.py hands groups out, the
longest first, and how a run adds them up again.

Under ``--dist loadgroup`` a group runs whole on one worker.  Two workers finish together only if the long
groups start early: one that starts last while the other worker has nothing left is the run's tail.  A
group's size says little about its length (the kill table is 32 tests that run every mutant; a broker's conformance
group is 150 quick ones), so the order comes from measured seconds, with the size only where nothing was
measured.

``MEASURED_S``: worker-seconds (setup, call and teardown of each test of the group) on a shared 2-core machine at
load 8-15, 2026-11-27.  Measured: the broker tier's modules and the selftest groups, each run alone on one worker
(``pytest -p no:xdist <files> --junitxml``).  Estimated: the implementations' groups, the kill table and the
container cleanup, from the slowest tests of a whole ``./run tests`` (``--durations``) and the targets' times of
its report, scaled by 2.5 (the ratio of the tests measured both ways; a wait, such as Kafka 3.7's 30 s, is not
scaled).  Only the order matters.  A run writes its own as ``groups.json`` beside ``--ktc-report``'s results
(``Tally``): refresh the table from a whole run's file when groups change.
"""

from __future__ import annotations

import json
from pathlib import Path

MEASURED_S: dict[str, float] = {
    "spark": 550.0,
    "broker-audit": 281.0,  # its two audit children at once: 80 -> 63 s alone
    "kafka-3.7.2": 136.0,  # retention tests after the rest, restarts last: 91 -> 54 s alone
    "kafka-container": 165.0,
    "failure-output": 150.0,
    "kafka-3.9.2": 150.0,
    "kafka-4.4.0": 140.0,
    "broker-security": 139.0,
    "reports": 131.0,
    "tansu": 125.0,
    "kill-table": 125.0,
    "container-cleanup": 100.0,
    "broker-clients": 92.0,
    "kfake": 90.0,
    "wheel": 87.0,
    "broker-crash-recovery": 85.0,
    "broker-leader-moves": 77.0,
    "broker-local-broker": 76.0,
    "kafka-cluster": 75.0,
    "broker-kfake": 72.0,
    "broker-topic-hygiene": 64.0,
    "broker-idle-connections": 59.0,
    "bulk-siblings": 55.0,
    "broker-discovery": 55.0,
    "broker-lockstep": 53.0,
    "broker-real-time-by-hand": 52.0,
    "broker-refused-requests": 45.0,
    "verdict-words": 42.0,
    "broker-faults": 41.0,
    "mypy": 33.0,
    "broker-crash-third-party": 35.0,
    "broker-third-party": 21.0,
    "broker-cluster-cleanup": 19.0,
    "every-verdict": 14.0,
    "broker-blocking-client-idle": 11.0,
    "broker-death": 9.0,
    "broker-retention-on-demand": 7.0,
    "broker-controlled-clock": 7.0,
}
PER_TEST_S = 0.5  # a group not in the table: this many seconds a test, plus its implementation's early wait


def expected_s(group: str, tests: int, wait_s: float, measured: dict[str, float]) -> float:
    """A group's expected worker-seconds: as measured, else estimated from its size and its early wait."""
    return measured.get(group, tests * PER_TEST_S + wait_s)


class Tally:
    """The controller's sum of each group's test seconds (setup, call, teardown), as their reports arrive."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.tests: dict[str, set[str]] = {}

    def add(self, group: str | None, nodeid: str, duration: float) -> None:
        name = group or "(no group)"
        self.seconds[name] = self.seconds.get(name, 0.0) + duration
        self.tests.setdefault(name, set()).add(nodeid)

    def longest(self) -> list[tuple[str, float, int]]:
        return sorted(((g, s, len(self.tests[g])) for g, s in self.seconds.items()), key=lambda row: -row[1])

    def write(self, directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "groups.json"
        rows = [{"group": g, "worker_s": round(s, 2), "tests": n} for g, s, n in self.longest()]
        path.write_text(json.dumps({"groups": rows}, indent=1) + "\n")
        return path
