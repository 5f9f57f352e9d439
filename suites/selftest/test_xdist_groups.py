"""An implementation's ``xdist_group`` keeps all its tests on one pytest-xdist worker (one Spark JVM, one
broker), on the pytest this venv has: pytest 9.2 ignores the nodeid suffix xdist 3.8 groups by
(ktc/plugin/groups.py), and a run that spreads a group says nothing, it is only slower."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

from ktc.plugin.group_costs import MEASURED_S, Tally
from ktc.plugin.groups import finished_group, handed_out_first

ROOT = Path(__file__).resolve().parents[2]
SUITES = ROOT / "suites"


def test_one_group_runs_on_one_worker_and_nodeids_stay_plain(tmp_path):
    (tmp_path / "grouped.py").write_text(
        textwrap.dedent("""
        from ktc.implementations.reference import ReferenceImplementation
        class Grouped(ReferenceImplementation):
            name = "grouped"
            xdist_group = "grouped"
        grouped = Grouped()
    """)
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "suites/kip937/test_validation.py"),
            "--rootdir",
            str(ROOT),
            "-p",
            "no:cacheprovider",
            "--impl=grouped:grouped",
            "--profile=kafka-4",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-v",
            "-k",
            "negative or unset or header or rejected_whole",
            "--ktc-report",
            str(tmp_path / "report"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "HYPOTHESIS_PROFILE": "dev"},
    )
    ran = re.findall(r"^\[(gw\d)\] .*PASSED (\S+)", done.stdout, re.M)
    assert done.returncode == 0 and len(ran) >= 4, done.stdout[-3000:] + done.stderr[-2000:]
    assert {worker for worker, _ in ran} in ({"gw0"}, {"gw1"}), ran  # ungrouped, 4 tests spread over both
    assert not [nodeid for _, nodeid in ran if "@" in nodeid], ran
    tallied = {row["group"]: row for row in json.loads((tmp_path / "report" / "groups.json").read_text())["groups"]}
    assert tallied["grouped"]["tests"] == len(ran) and tallied["grouped"]["worker_s"] > 0, tallied
    assert "ktc: worker-seconds of the longest xdist groups: grouped " in done.stdout, done.stdout[-2000:]


class Item:
    """What handed_out_first reads of a pytest item: its xdist_group mark and its impl parameter."""

    def __init__(self, name: str, group: str | None, waits_at_start_s: float = 0.0, marks: tuple[str, ...] = ()):
        self.name, self.group, self.marks = name, group, marks
        self.callspec = SimpleNamespace(params={"impl": SimpleNamespace(waits_at_start_s=waits_at_start_s)})

    def iter_markers(self, name: str):
        return [SimpleNamespace(args=(self.group,), kwargs={})] if name == "xdist_group" and self.group else []

    def get_closest_marker(self, name: str):
        return SimpleNamespace(name=name) if name in self.marks else None


def test_groups_are_handed_out_longest_first_by_their_measured_seconds_then_tests_of_no_group():
    """Measured seconds decide, not size; a group not measured is its size at 0.5 s a test plus its early wait
    (kafka-3.7.2: 2 tests and a 30 s wait, 31 s; kafka-cluster: 0.5 s); tests of no group last, as collected."""
    items = [
        Item("free1", None),
        Item("spark1", "spark"),
        Item("spark2", "spark"),
        Item("spark3", "spark"),
        Item("old1", "kafka-3.7.2", 30.0),
        Item("free2", None),
        Item("kill1", "kill-table"),
        Item("old2", "kafka-3.7.2", 30.0),
        Item("cluster1", "kafka-cluster"),
    ]
    order = [item.name for item in handed_out_first(items, {"kill-table": 90.0, "spark": 20.0})]
    assert order == ["kill1", "old1", "old2", "spark1", "spark2", "spark3", "cluster1", "free1", "free2"]


def test_in_a_group_that_waits_for_its_first_retention_pass_restarts_go_last_and_retention_after_the_rest():
    """Kafka before 3.8 runs its first retention pass 30 s after the broker starts, and again after each restart:
    the tests that need no pass go first, a restart last; a group without the wait keeps its collection order."""
    marks = {"crash": ("restarts_broker",), "segments": ("retention",), "logs": ("pinned", "retention")}
    order = ["crash", "segments", "validation", "logs", "lookups"]
    old = [Item(name, "kafka-3.7.2", 30.0, marks.get(name, ())) for name in order]
    new = [Item(name, "kafka-4.4.0", 0.0, marks.get(name, ())) for name in order]
    assert [item.name for item in handed_out_first(old, {})] == ["validation", "lookups", "segments", "logs", "crash"]
    assert [item.name for item in handed_out_first(new, {})] == order


def test_every_measured_group_is_one_a_suite_or_an_implementation_declares():
    """A renamed group would be estimated by its size again, silently: the table names only groups that exist."""
    from ktc import implementations

    declared = set(re.findall(r'xdist_group\("([\w-]+)"\)', "".join(p.read_text() for p in SUITES.rglob("*.py"))))
    stale = [g for g in MEASURED_S if g not in declared and g not in implementations.builtins() and not pattern(g)]
    assert not stale, f"group_costs.MEASURED_S names groups nothing declares: {stale}"


def pattern(name: str) -> bool:
    from ktc import implementations

    return implementations.from_pattern(name) is not None


def test_a_run_adds_up_each_groups_seconds_and_writes_them_longest_first(tmp_path):
    tally = Tally()
    for group, nodeid, seconds in [("spark", "a", 2.0), (None, "b", 1.0), ("spark", "a", 3.0), ("kfake", "c", 4.0)]:
        tally.add(group, nodeid, seconds)
    written = json.loads(tally.write(tmp_path / "report").read_text())["groups"]
    assert written == [
        {"group": "spark", "worker_s": 5.0, "tests": 1},
        {"group": "kfake", "worker_s": 4.0, "tests": 1},
        {"group": "(no group)", "worker_s": 1.0, "tests": 1},
    ]


class Impl(SimpleNamespace):
    def __hash__(self):
        return id(self)


def grouped(name: str, impl, config) -> Item:
    item = Item(name, getattr(impl, "xdist_group", None))
    item.callspec, item.config = SimpleNamespace(params={"impl": impl}), config
    return item


WORKER = SimpleNamespace(workerinput={"workerid": "gw0"}, getvalue=lambda name: name == "loadgroup")


def like(cls, group: str) -> Impl:
    """A stand-in with the real class's flags: what decides whether its group's end is its end."""
    return Impl(xdist_group=group, bulk=cls.bulk, bulk_session=getattr(cls, "bulk_session", False))


def test_an_implementation_is_finished_on_a_worker_only_where_its_own_group_ends():
    from ktc.implementations.kafka.adapter import BrokerAdapter
    from ktc.implementations.spark import SparkImplementation

    broker, spark = like(BrokerAdapter, "kafka-3.9.2"), like(SparkImplementation, "spark")
    first, last = grouped("a", broker, WORKER), grouped("b", broker, WORKER)
    other, sparks = grouped("c", like(BrokerAdapter, "kfake"), WORKER), grouped("d", spark, WORKER)
    assert [finished_group(first, last), finished_group(last, other), finished_group(last, None)] == [
        None,
        broker,
        None,
    ]
    assert finished_group(sparks, other) is None  # Spark judges every test's histories at the session's end


def test_no_implementation_is_finished_early_outside_a_loadgroup_worker():
    broker = Impl(xdist_group="kafka-3.9.2", bulk=True)
    controller = SimpleNamespace(getvalue=lambda name: name == "loadgroup")
    other = grouped("c", Impl(xdist_group="kfake", bulk=False), controller)
    assert finished_group(grouped("a", broker, controller), other) is None


def test_a_loadgroup_run_stopped_after_its_first_test_leaves_no_groups_folder(tmp_path):
    """The workers' group files are read once, when the first test is handed out, and their folder removed then:
    a run stopped later by SIGTERM (which pytest's own cleanup never sees) leaves nothing in the temp folder."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    argv = [sys.executable, "-m", "pytest", str(ROOT / "suites/kip937/test_validation.py"), "--rootdir", str(ROOT)]
    argv += ["-p", "no:cacheprovider", "--impl=reference", "--profile=kafka-4", "-n", "2", "--dist", "loadgroup", "-v"]
    child = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "TMPDIR": str(temp), "HYPOTHESIS_PROFILE": "dev"},
    )
    try:
        seen = []
        for line in child.stdout:
            seen.append(line)
            if "PASSED" in line:
                break
        assert any("PASSED" in line for line in seen), "".join(seen[-40:])
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert not list(temp.rglob("ktc-groups-*")), sorted(str(p) for p in temp.rglob("*groups*"))
