"""``--dist loadgroup`` that groups again on pytest 9.2+.

pytest-xdist 3.8 tells its scheduler a test's ``xdist_group`` by appending ``@group`` to the nodeid in
the worker; pytest 9.2 derives nodeids from a structured id and ignores that write
(pytest-dev/pytest-xdist#1386), so every group was silently spread over both workers: each worker
started its own Spark JVM, its own brokers and its own 3-node cluster, and the "one worker makes the
shared run once" fixtures ran twice.  Here each worker writes the groups of what it collected to a
file the controller named (``workerinput``), and the controller's scheduler, xdist's own
``LoadGroupScheduling``, looks a test's scope up there.  Nodeids stay as they are.  Under a pytest
that still takes the ``@group`` suffix, xdist's own parsing decides, as before.

The workers also put the items in the order the scheduler hands their groups out (``handed_out_first``):
the longest group first, by the worker-seconds it took in ktc's own CI (``group_costs.MEASURED_S``), so
no long group starts last while the other worker idles at the end; a group not measured is estimated from
its size, plus its implementation's early wait (``waits_at_start_s``: Kafka before 3.8 runs its first
retention pass 30 s after it starts); tests of no group last.  In a group with such a wait, tests that run
retention passes go after the others and tests that restart the broker last (``after_the_wait``).  The
scheduler keeps that order.  The controller adds up each group's seconds as its tests report and writes them
beside ``--ktc-report``'s results (``groups.json``), where the table is refreshed from.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from ktc.plugin import group_costs

KEY = "ktc-groups-dir"


def group_of(item: pytest.Item) -> str | None:
    """xdist's name for an item's group: its ``xdist_group`` marks, sorted and joined."""
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) or None


def handed_out_first(items: list, measured: dict[str, float] = group_costs.MEASURED_S) -> list:
    """Groups by their expected worker-seconds, the longest first, then tests of no group; ties, and each
    group's own items, in collection order."""
    sizes: dict[str | None, int] = {}
    waits: dict[str | None, float] = {}
    for item in items:
        group = group_of(item)
        sizes[group] = sizes.get(group, 0) + 1
        waits[group] = max(waits.get(group, 0.0), waits_at_start(item))
    first = {g: i for i, g in reversed(list(enumerate(group_of(item) for item in items)))}
    cost = {g: group_costs.expected_s(g, sizes[g], waits[g], measured) for g in sizes if g is not None}

    def rank(item) -> tuple:
        group = group_of(item)
        if group is None:
            return (1, 0.0, first[group], 0)
        return (0, -cost[group], first[group], after_the_wait(item) if waits[group] else 0)

    return sorted(items, key=rank)


def after_the_wait(item: pytest.Item) -> int:
    """Where an item goes in a group whose broker waits before its first retention pass: tests that need no pass
    first (the wait passes meanwhile), then those marked ``retention``, then those marked ``restarts_broker`` (a new
    JVM waits again: no retention test comes after it)."""
    if item.get_closest_marker("restarts_broker"):
        return 2
    return 1 if item.get_closest_marker("retention") else 0


def impl_of(item: pytest.Item):
    params = getattr(item, "callspec", None)
    return params.params.get("impl") if params else None


REAL_TIME_WAIT_S = 600.0  # the real-time tier's own group (plan.py: over_real_time) waits minutes: it goes first


def waits_at_start(item: pytest.Item) -> float:
    if (group_of(item) or "").endswith("-real-time"):
        return REAL_TIME_WAIT_S
    return float(getattr(impl_of(item), "waits_at_start_s", 0.0) or 0.0)


def finished_group(item: pytest.Item, nextitem: pytest.Item | None):
    """The implementation whose own group ends with ``item`` on this worker, or None.  Under ``--dist loadgroup``
    a group runs whole on one worker, in a row, so its implementation is not used here again: what it started
    can stop now instead of idling until the session ends (a broker ktc starts checks retention every 5 ms).
    Not one that judges at the session's end (``bulk_session``, Spark): its run is still to come.  A ``bulk``
    one (a broker) judges each test's histories at that test, so its group's end is its end."""
    config = item.config
    if nextitem is None or not hasattr(config, "workerinput") or not config.getvalue("loadgroup"):
        return None
    impl, group = impl_of(item), group_of(item)
    if impl is None or getattr(impl, "bulk_session", False) or group != getattr(impl, "xdist_group", None) or not group:
        return None
    return impl if group_of(nextitem) != group else None


class Plugin:
    """Registered in a ktc session when pytest-xdist is present (``ktc.plugin.pytest_configure``)."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.dir: Path | None = None
        self.tally = group_costs.Tally()
        self.groups: dict[str, str] | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:  # controller, once per worker
        if self.config.getvalue("dist") != "loadgroup":
            return
        if self.dir is None:
            self.dir = Path(tempfile.mkdtemp(prefix="ktc-groups-", dir=basetemp(self.config)))
        node.workerinput[KEY] = str(self.dir)

    def groups_read(self) -> dict[str, str]:
        """Each test's group, read once from the workers' files (every worker has written its own before the
        scheduler hands out a test), and their folder removed then: nothing reads it again, so a run stopped
        later (Ctrl-C, SIGTERM, which pytest's own cleanup never sees) leaves nothing in the temp folder."""
        if self.groups is None:
            self.groups = {}
            if self.dir is not None:
                self.groups = read_groups(self.dir)
                shutil.rmtree(self.dir, ignore_errors=True)
        return self.groups

    @pytest.hookimpl(trylast=True)  # after every hook that adds a group (ktc's hooks.py, xdist's own)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        where = getattr(config, "workerinput", {}).get(KEY)
        if where is None or not config.getvalue("loadgroup"):
            return
        items[:] = handed_out_first(items)
        groups = {item.nodeid: g for item in items if (g := group_of(item)) is not None}
        target = Path(where) / f"{config.workerinput['workerid']}.json"
        target.with_suffix(".tmp").write_text(json.dumps(groups))
        target.with_suffix(".tmp").replace(target)

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        if config.getvalue("dist") != "loadgroup" or self.dir is None:
            return None
        return scheduler_class()(config, log, self.groups_read)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:  # the controller: every worker's reports
        if self.dir is None or self.config.getvalue("dist") != "loadgroup":
            return
        self.tally.add(self.groups_read().get(report.nodeid), report.nodeid, report.duration)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        directory = self.config.getoption("ktc_report", None)
        if directory and self.tally.seconds:
            self.tally.write(Path(directory))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        longest = self.tally.longest()[:8]
        if longest:
            said = ", ".join(f"{group} {seconds:.0f} s" for group, seconds, _ in longest)
            terminalreporter.write_line(f"ktc: worker-seconds of the longest xdist groups: {said}")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)


def scheduler_class():
    from xdist.scheduler import LoadGroupScheduling

    class GroupsFromWorkers(LoadGroupScheduling):
        """xdist's loadgroup scheduler with each test's group read from the workers' files."""

        def __init__(self, config, log, groups: Callable[[], dict[str, str]]):
            super().__init__(config, log)
            config.option.loadscopereorder = False  # the workers ordered the items (handed_out_first)
            self.groups = groups

        def _split_scope(self, nodeid: str) -> str:  # first asked in schedule(), after every worker collected
            return self.groups().get(nodeid) or super()._split_scope(nodeid)

    return GroupsFromWorkers


def basetemp(config: pytest.Config) -> Path | None:
    """The session's pytest temp folder (its workers' folders are in it), where a run stopped before its groups
    were read leaves its groups folder: pytest removes old sessions' folders (it keeps the last three); None,
    the system's temp folder, where pytest does not say."""
    factory = getattr(config, "_tmp_path_factory", None)
    return factory.getbasetemp() if factory is not None else None


def read_groups(where: Path) -> dict[str, str]:
    """Each test's group, as the workers wrote them (nodeid -> group; a test of no group is absent)."""
    groups: dict[str, str] = {}
    for path in sorted(where.glob("*.json")):
        groups.update(json.loads(path.read_text()))
    return groups
