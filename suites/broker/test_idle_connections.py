"""Connections that die while the pipeline is idle are found dead and reopened before they are used.

A broker reaps connections idle for ``connections.max.idle.ms`` (here 3 s, far below the pipeline's
own idle limit, left at its default).  One implementation runs a batch of histories, waits until
the broker has closed every one of its connections, and runs the batch again: no history is cut,
every clause both runs decided has the first (fresh) run's verdict, and the slots reopened their
connections.  The same when every pipeline connection is closed between two runs, by the far end
(a FaultProxy, suites/broker/faultproxy.py, severs them) or by this one (shut down under the
pipeline): the pipeline must see the close before its next send, or lose what it sends.
"""

from __future__ import annotations

import itertools
import os
import select
import socket
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.implementations.families.bootstrap import TARGET as BY_ADDRESS  # noqa: E402
from ktc.implementations.kafka.adapter import BrokerAdapter  # noqa: E402
from ktc.implementations.kafka.launch import QUIET  # noqa: E402
from ktc.implementations.kafka.settings import ByAddress  # noqa: E402
from ktc.judge import bulk_intervals, harness  # noqa: E402
from ktc.kafka.client.security import PLAINTEXT  # noqa: E402
from ktc.kafka.processes import provision, scratch  # noqa: E402
from ktc.kafka.topics import TopicNamer  # noqa: E402
from ktc.suites.broker.faultproxy import FaultProxy  # noqa: E402
from ktc.suites.broker.test_faults import ProxiedBroker  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-idle-connections")  # the module on one worker: its fixtures once
VERSION = os.environ.get("KTC_KAFKA_VERSION") or provision.DEFAULT_VERSIONS[0]
IDLE_MS = 3000
HISTORIES = 60
SEED = 3
REAPED_WITHIN_S = IDLE_MS / 1000 + 30  # the broker's reaper closes one expired connection per poll


@pytest.fixture(scope="module")
def network():
    """(broker, proxy): a broker that reaps idle connections, also reachable through a fault-free proxy."""
    data = scratch.make()
    config = {**QUIET, "connections.max.idle.ms": IDLE_MS, **({"log.dirs": data} if data is not None else {})}
    try:
        with FaultProxy() as proxy, ProxiedBroker(VERSION, proxy.port, config=config) as broker:
            proxy.target = ("127.0.0.1", broker.proxied_port)
            yield broker, proxy
    finally:
        scratch.remove(data)


WORKERS = itertools.count()


def implementation(bootstrap: str) -> BrokerAdapter:
    impl = BrokerAdapter(BY_ADDRESS, ByAddress(bootstrap, PLAINTEXT))
    impl.namer = TopicNamer(worker=f"idle{next(WORKERS)}")  # names no other implementation here draws
    return impl


@pytest.fixture
def direct(network):
    impl = implementation(network[0].bootstrap)
    try:
        yield impl
    finally:
        impl.close()


@pytest.fixture
def proxied(network):
    impl = implementation(network[1].bootstrap)
    try:
        yield impl, network[1]
    finally:
        impl.close()


def run(impl, corpus) -> tuple[list, list[dict]]:
    """(traces, clause -> validity per history); a cut history fails here, before it is judged."""
    clauses = tuple(bulk_intervals.clauses_for(impl, impl.profile()))
    traces = impl.run(corpus)
    assert [t.cut for t in traces if t.cut is not None] == []
    return traces, [
        {v.clause: v.validity.value for v in harness.judge_one(h, t, clauses)}
        for h, t in zip(corpus, traces, strict=True)
    ]


def closed_by_peer(sock: socket.socket) -> bool:
    """Whether the other end's FIN (or RST) waits on ``sock``: peeked, so the pipeline finds it itself."""
    if not select.select([sock], [], [], 0)[0]:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except ConnectionError:
        return True


def await_true(condition, timeout_s: float, what: str) -> float:
    """Seconds until ``condition()`` held; fails after ``timeout_s``."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout_s, f"still waiting after {timeout_s:.0f} s for {what}"
        time.sleep(0.05)
    return time.monotonic() - started


def connections(impl) -> dict:
    """slot -> its connection, for every slot of the implementation's pipeline that has one."""
    return {slot: slot.conn for slot in impl.executor.pipeline.slots if slot.conn is not None}


DECIDED = ("pass", "fail")


def disagreements(first: list[dict], second: list[dict]) -> list:
    """(history index, clause, first, second) wherever both runs decided a clause differently.  Where
    the broker's now fell decides the rest, not the connection: a clause only one run judged (a record
    exactly on a bound, KIP-937.bounds-inclusive) and one an interval left unknown."""
    return [
        (i, clause, a[clause], b[clause])
        for i, (a, b) in enumerate(zip(first, second, strict=True))
        for clause in a.keys() & b.keys()
        if a[clause] != b[clause] and {a[clause], b[clause]} <= set(DECIDED)
    ]


def assert_reopened_and_judged_as_fresh(impl, corpus, first: list[dict], before: dict) -> None:
    traces, second = run(impl, corpus)
    after = connections(impl)
    replaced = [slot for slot, conn in before.items() if after[slot] is not conn]
    print(
        f"\nktc idle: {len(corpus)} histories; {len(replaced)} of {len(before)} connections reopened "
        f"({sum(s.reopened for s in after)} reopenings), {impl.executor.pipeline.resent} requests resent; "
        f"verdicts first {dict(Counter(v for d in first for v in d.values()))}, "
        f"second {dict(Counter(v for d in second for v in d.values()))}"
    )
    assert disagreements(first, second) == []
    assert impl.executor.pipeline.admin() in replaced and len(replaced) >= 2, (len(replaced), len(before))
    assert all(slot.reopened >= 1 and before[slot].faulted for slot in replaced)


def test_connections_the_broker_reaped_while_idle_are_reopened_and_judge_as_fresh_ones(direct):
    corpus = bulk_intervals.scenarios(direct.profile(), HISTORIES, SEED)
    _, first = run(direct, corpus)
    before = connections(direct)
    waited = await_true(
        lambda: all(closed_by_peer(c.sock) for c in before.values()),
        REAPED_WITHIN_S,
        f"the broker to close {len(before)} idle pipeline connections",
    )
    print(f"\nktc idle: the broker closed {len(before)} idle connections {waited:.1f} s after the first run")
    assert waited >= IDLE_MS / 1000 - 1  # closed for idleness, not for anything the run did
    assert_reopened_and_judged_as_fresh(direct, corpus, first, before)


def test_connections_the_far_end_closed_between_two_runs_are_reopened_before_they_are_used(proxied):
    impl, proxy = proxied
    corpus = bulk_intervals.scenarios(impl.profile(), HISTORIES, SEED + 1)
    _, first = run(impl, corpus)
    before = connections(impl)
    assert proxy.sever() >= len(before)
    await_true(lambda: all(closed_by_peer(c.sock) for c in before.values()), 10, "the proxy's closes to arrive")
    resent = impl.executor.pipeline.resent
    assert_reopened_and_judged_as_fresh(impl, corpus, first, before)
    assert impl.executor.pipeline.resent == resent  # found closed before use: nothing was lost, nothing sent twice


def test_connections_shut_down_under_the_pipeline_between_two_runs_are_reopened(direct):
    corpus = bulk_intervals.scenarios(direct.profile(), HISTORIES, SEED + 2)
    _, first = run(direct, corpus)
    before = connections(direct)
    for conn in before.values():  # the EOF this leaves is what the pipeline must see before its next send
        conn.sock.shutdown(socket.SHUT_RDWR)
    assert_reopened_and_judged_as_fresh(direct, corpus, first, before)


def test_the_stateful_leader_change_histories_pass_on_a_broker_that_reaps_idle_connections_every_second(tmp_path):
    """The test that flaked with BrokenPipeError, on a broker whose idle timeout is far shorter than the run."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "KTC_KAFKA_BROKER_CONFIG": "connections.max.idle.ms=1000", "HYPOTHESIS_PROFILE": "ci"}
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "suites/stateful/test_histories.py",
            "--impl",
            "kafka-3.9",
            "-p",
            "no:cacheprovider",
            "-q",
            "-n",
            "0",
            "-k",
            "leader_changes",
            "--ktc-report",
            str(tmp_path),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    took = time.monotonic() - started
    print(f"ktc idle: stateful leader-change test on kafka-3.9 with connections.max.idle.ms=1000 took {took:.0f} s")
    idle_s = 1.0  # connections.max.idle.ms above: the run must outlast it, or no connection was reaped
    assert proc.returncode == 0 and " passed" in proc.stdout and took > 2 * idle_s, proc.stdout[-3000:]
