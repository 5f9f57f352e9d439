"""Broken connections under the pipelined run (client/connection.py, client/multiplex.py, judge/pipeline.py).

One broker, reached two ways: directly, and through a FaultProxy (suites/broker/faultproxy.py) that
breaks connections before a request reaches the broker, after it did (its answer dropped), or in
the middle of the answer.  The same seeded corpus runs fault-free on the direct listener and with
random faults through the proxy.  A fault may make verdicts ``unknown`` (a Produce that may have
been applied cuts its history), never flip a pass to a fail or back, and never make one ``error``.
Reads, Metadata, CreateTopics and DeleteTopics are sent again.  Planned faults pin each kind on a
Produce (cut as unknown) and on a Fetch (resent, history judged to its end).

The broker advertises the proxy's port on a listener of its own: Metadata names the partition
leaders' advertised address and the pipeline routes operations there (``Creation.by_leader``,
``HistoryRun.address``), so with one advertised listener every operation would bypass the proxy.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import socket
import struct
import threading
import time
from collections import Counter

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.implementations.families.bootstrap import TARGET as BY_ADDRESS  # noqa: E402
from ktc.implementations.kafka.adapter import BrokerAdapter  # noqa: E402
from ktc.implementations.kafka.launch import QUIET  # noqa: E402
from ktc.implementations.kafka.settings import ByAddress  # noqa: E402
from ktc.judge import bulk_intervals, harness  # noqa: E402
from ktc.kafka.client import connection  # noqa: E402
from ktc.kafka.client.multiplex import MAX_RESENDS  # noqa: E402
from ktc.kafka.client.security import PLAINTEXT  # noqa: E402
from ktc.kafka.processes import provision, scratch  # noqa: E402
from ktc.kafka.processes.broker import LocalBroker, free_ports  # noqa: E402
from ktc.kafka.topics import TopicNamer  # noqa: E402
from ktc.reference.types import Batch, CreateTopic, Fetch, History, ListOffsets, Produce, Record, TopicConfig  # noqa: E402
from ktc.suites.broker.faultproxy import AFTER, BEFORE, KINDS, FaultProxy, read_frame  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-faults")  # the module on one worker: its fixtures once
VERSION = os.environ.get("KTC_KAFKA_VERSION") or provision.DEFAULT_VERSIONS[0]
HISTORIES = int(os.environ.get("KTC_FAULT_HISTORIES", "300"))
SEED = 20240607
PROBABILITY = 0.04  # per request frame
MAX_FAULTS = 45  # about 15 of each kind
MIN_PER_KIND = 3


class ProxiedBroker(LocalBroker):
    """A local broker with a second plaintext listener advertised at the proxy's port: a client that
    comes in through the proxy is sent back to it by Metadata; one on ``bootstrap`` stays direct."""

    def __init__(self, version: str, proxy_port: int, **options):
        super().__init__(version, **options)
        self.proxy_port, (self.proxied_port,) = proxy_port, free_ports(1)

    def properties(self) -> dict[str, object]:
        props = super().properties()
        props["listeners"] = f"{props['listeners']},PROXIED://127.0.0.1:{self.proxied_port}"
        props["advertised.listeners"] = f"{props['advertised.listeners']},PROXIED://127.0.0.1:{self.proxy_port}"
        props["listener.security.protocol.map"] = f"{props['listener.security.protocol.map']},PROXIED:PLAINTEXT"
        return props


@pytest.fixture(scope="module")
def network():
    """(broker, proxy): the proxy forwards to the broker's proxied listener, with no faults until armed."""
    data = scratch.make()
    try:
        with FaultProxy(seed=SEED, max_faults=MAX_FAULTS) as proxy:
            config = {**QUIET, **({"log.dirs": data} if data is not None else {})}
            with ProxiedBroker(VERSION, proxy.port, config=config) as broker:
                proxy.target = ("127.0.0.1", broker.proxied_port)
                yield broker, proxy
        assert not proxy.alive_threads(), "FaultProxy left threads running"
    finally:
        scratch.remove(data)


@contextlib.contextmanager
def implementation(bootstrap: str, worker: str):
    """The adapter of a broker by address on ``bootstrap``, whose topic names no other one in this process draws."""
    impl = BrokerAdapter(BY_ADDRESS, ByAddress(bootstrap, PLAINTEXT))
    impl.namer = TopicNamer(worker=worker)
    try:
        impl.limit_defaults()  # discovery now, before any fault: its blocking client does not reconnect
        impl.probed()  # and the probe of what it answers (judge/probe.py): a fault there is not a refusal
        yield impl
    finally:
        impl.close()


# ---- judging ---------------------------------------------------------------------------------


def validities(history: History, trace, clauses: tuple, expected: dict) -> dict[str, str]:
    """clause -> pass/fail/unknown, or the cut's unknown/error for every clause ``expected`` has."""
    cut = getattr(trace, "cut", None)
    if cut is not None:
        return {clause: cut.validity for clause in expected}
    return {v.clause: v.validity.value for v in harness.judge_one(history, trace, clauses)}


def transition(was: str, now: str) -> str:
    if now == was:
        return "kept"
    if now in ("error", "missing"):  # missing: not cut, but nothing to judge (a bound hit exactly, or not)
        return now
    if was in ("pass", "fail") and now in ("pass", "fail"):
        return "flipped"
    if was in ("pass", "fail"):
        return "decided -> unknown"
    return f"{was} -> {now}"


def transitions(baseline: list[dict], faulted: list[dict]) -> Counter:
    return Counter(
        transition(was, after.get(clause, "missing"))
        for before, after in zip(baseline, faulted, strict=True)
        for clause, was in before.items()
    )


def tally(verdicts: list[dict]) -> Counter:
    return Counter(v for found in verdicts for v in found.values())


def cuts(traces) -> Counter:
    return Counter(f"{t.cut.validity} at {t.cut.reason.split(':')[0]}" for t in traces if t.cut is not None)


def pipeline_counts(impl) -> dict:
    pipeline = impl.executor.pipeline
    return {"resent": pipeline.resent, "reopened": sum(s.reopened for s in pipeline.slots)}


# ---- random faults at volume -----------------------------------------------------------------


def test_random_faults_cut_or_resend_but_never_flip_a_verdict_or_make_it_an_error(network):
    broker, proxy = network
    with implementation(broker.bootstrap, "direct") as direct, implementation(proxy.bootstrap, "faulted") as faulted:
        profile = direct.profile()
        assert faulted.profile() == profile
        corpus = bulk_intervals.scenarios(profile, HISTORIES, SEED)
        clauses = tuple(bulk_intervals.clauses_for(direct, profile))

        started = time.monotonic()
        baseline = [validities(h, t, clauses, {}) for h, t in zip(corpus, direct.run(corpus), strict=True)]
        direct_s = time.monotonic() - started

        started = time.monotonic()
        proxy.arm(PROBABILITY)
        traces = faulted.run(corpus)
        proxy.arm(0.0)
        faulted_s = time.monotonic() - started
        seen = [validities(h, t, clauses, b) for h, t, b in zip(corpus, traces, baseline, strict=True)]
        counts = pipeline_counts(faulted)

    moved = transitions(baseline, seen)
    print(
        f"\nktc faults: {len(corpus)} histories of {profile} on Kafka {VERSION}; faults {dict(proxy.faults)} "
        f"({proxy.resets} by RST) over {proxy.requests} requests on {proxy.connections} proxied connections; "
        f"{counts['resent']} requests resent, {counts['reopened']} connections reopened; "
        f"{sum(t.cut is not None for t in traces)} histories cut {dict(cuts(traces))}; "
        f"verdicts fault-free {dict(tally(baseline))}, with faults {dict(tally(seen))}; "
        f"decided verdicts {dict(moved)}; wall {direct_s:.1f} s fault-free, {faulted_s:.1f} s with faults"
    )
    assert all(proxy.faults[kind] >= MIN_PER_KIND for kind in KINDS), proxy.faults
    assert moved["flipped"] == moved["error"] == 0, moved
    assert not [t.cut for t in traces if t.cut is not None and t.cut.validity == "error"]
    assert counts["resent"] > 0 and any(t.cut is not None for t in traces), (counts, cuts(traces))


# ---- one planned fault at a time ---------------------------------------------------------------

NOW = 1_700_000_000_000


def append(profile: str) -> History:
    records = Batch(tuple(Record(NOW - 1000 * i) for i in range(3)))
    config = TopicConfig(after_max_ms=3_600_000)  # a config of its own: the pipeline DescribeConfigs it
    ops = (CreateTopic("t", config), Produce("t", records), Fetch("t"), ListOffsets("t", -1))
    return History(profile, ops, NOW)


@pytest.fixture(scope="module")
def proxied(network):
    """An implementation through the proxy, and the verdicts of ``append`` run fault-free directly."""
    broker, proxy = network
    with implementation(broker.bootstrap, "planneddirect") as direct:
        history = append(direct.profile())
        clauses = tuple(bulk_intervals.clauses_for(direct, history.profile))
        (trace,) = direct.run([history])
        expected = validities(history, trace, clauses, {})
    with implementation(proxy.bootstrap, "planned") as impl:
        yield impl, proxy, history, clauses, expected


@pytest.fixture
def planned(proxied):
    """The same, with no planned fault left over for the next test."""
    yield proxied
    proxied[1].planned.clear()


@pytest.mark.parametrize("kind", KINDS)
def test_a_produce_whose_connection_breaks_cuts_its_history_as_unknown(planned, kind):
    impl, proxy, history, clauses, expected = planned
    proxy.plan(kind, "Produce")
    (trace,) = impl.run([history])
    assert trace.cut is not None and (trace.cut.validity, trace.cut.op_index) == ("unknown", 1), trace.cut
    assert "Produce" in trace.cut.reason
    assert set(validities(history, trace, clauses, expected).values()) == {"unknown"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_fetch_whose_connection_breaks_is_sent_again_and_judged_as_without_faults(planned, kind):
    impl, proxy, history, clauses, expected = planned
    resent = impl.executor.pipeline.resent if impl.executor.pipeline is not None else 0
    proxy.plan(kind, "Fetch")
    (trace,) = impl.run([history])
    assert trace.cut is None
    assert impl.executor.pipeline.resent > resent
    found = validities(history, trace, clauses, expected)
    assert set(transitions([expected], [found])) <= {"kept", "missing"}, (expected, found)


@pytest.mark.parametrize("api", ["CreateTopics", "Metadata", "ListOffsets", "DescribeConfigs", "DeleteTopics"])
def test_an_admin_request_whose_connection_breaks_is_sent_again(planned, api):
    impl, proxy, history, clauses, expected = planned
    resent = impl.executor.pipeline.resent if impl.executor.pipeline is not None else 0
    proxy.plan(AFTER, api)
    (trace,) = impl.run([history])
    assert trace.cut is None and impl.executor.pipeline.resent > resent
    assert not proxy.planned, "the planned fault never happened"


# ---- the proxy itself, on a stand-in broker that answers every frame with its body twice -----


@pytest.fixture
def echo():
    """(address, frames seen): a framed echo server on loopback."""
    server, seen = socket.create_server(("127.0.0.1", 0)), []

    def serve(conn):
        with conn:
            while (frame := read_frame(conn)) is not None:
                seen.append(frame)
                conn.sendall(struct.pack(">i", 2 * (len(frame) - 4)) + frame[4:] * 2)

    def accept():
        with contextlib.suppress(OSError):
            while True:
                threading.Thread(target=serve, args=(server.accept()[0],), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname(), seen
    server.close()


def fetch_frame(n: int) -> bytes:
    body = struct.pack(">hhi", 1, 11, n) + b"request"  # api key 1 (Fetch), version, correlation id
    return struct.pack(">i", len(body)) + body


def exchange(port: int, frames: int) -> bytes:
    """Send ``frames`` requests at once and read until the proxy closes (or all answers came)."""
    want = frames * (4 + 2 * (len(fetch_frame(0)) - 4))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(b"".join(fetch_frame(n) for n in range(frames)))
        got = b""
        with contextlib.suppress(ConnectionResetError):
            while len(got) < want and (data := conn.recv(1 << 16)):
                got += data
    return got


@pytest.mark.parametrize("kind", [None, *KINDS])
def test_the_proxy_breaks_the_second_request_the_way_it_was_told(echo, kind):
    address, seen = echo
    answer = 4 + 2 * (len(fetch_frame(0)) - 4)
    with FaultProxy(address) as proxy:
        if kind is not None:
            proxy.plan(kind, "Fetch", skip=1)
        got = exchange(proxy.port, 3)
        assert sum(proxy.faults.values()) == (kind is not None)
    assert not proxy.alive_threads()
    if kind is None:
        assert (len(got), len(seen)) == (3 * answer, 3)
    elif kind == BEFORE:
        assert len(got) <= answer and fetch_frame(1) not in seen
    elif kind == AFTER:
        assert len(got) <= answer and fetch_frame(1) in seen
    else:
        assert answer < len(got) < 2 * answer and fetch_frame(1) in seen


# ---- bugs these tests found (each was a strict xfail until fixed) ---------------------------------


def mid_history_create(profile: str) -> History:
    records = Batch(tuple(Record(NOW - 1000 * i) for i in range(3)))
    later = TopicConfig(after_max_ms=3_600_000)
    ops = (
        CreateTopic("t", TopicConfig()),
        Produce("t", records),
        CreateTopic("u", later),
        Produce("u", records),
        Fetch("u"),
        ListOffsets("u", -1),
    )
    return History(profile, ops, NOW)


def test_a_mid_history_create_whose_answer_was_lost_is_judged_as_without_faults(network, planned):
    impl, proxy, _history, clauses, _expected = planned
    history = mid_history_create(impl.profile())
    with implementation(network[0].bootstrap, "middirect") as direct:
        (fresh,) = direct.run([history])
        expected = validities(history, fresh, clauses, {})
    proxy.plan(AFTER, "CreateTopics", skip=1)  # the first is the batch's leading CreateTopics
    (trace,) = impl.run([history])
    assert trace.cut is None and not proxy.planned
    assert trace[2] == fresh[2]  # CreateTopicResult(0): the resend's TOPIC_ALREADY_EXISTS is our own doing
    found = validities(history, trace, clauses, expected)
    assert transitions([expected], [found])["flipped"] == 0, (expected, found)  # kafka-3.6: difference-deprecated


def test_a_create_topics_lost_past_its_resends_cuts_its_histories_as_unknown(planned):
    impl, proxy, history, _clauses, _expected = planned
    for _ in range(MAX_RESENDS + 1):
        proxy.plan(AFTER, "CreateTopics")
    (trace,) = impl.run([history])
    assert trace.cut is not None and trace.cut.validity == "unknown", trace.cut


class ResetOnSend:
    """A socket whose ``send`` of the ``nth`` Produce request (counted over every such socket) raises
    ECONNRESET, as a socket the far end reset does; all else is the real socket's."""

    def __init__(self, sock, produces, nth: int):
        self.sock, self.produces, self.nth = sock, produces, nth

    def send(self, data) -> int:
        if bytes(data[4:6]) == b"\x00\x00" and next(self.produces) == self.nth:
            raise ConnectionResetError(errno.ECONNRESET, "Connection reset by peer (simulated)")
        return self.sock.send(data)

    def __getattr__(self, name):
        return getattr(self.sock, name)


def test_a_send_that_fails_at_once_cuts_the_history_whose_request_was_on_the_connection(network, monkeypatch):
    with implementation(network[0].bootstrap, "resetonsend") as impl:
        corpus = bulk_intervals.scenarios(impl.profile(), 3, 1)
        produces, real = itertools.count(1), connection.open_socket
        monkeypatch.setattr(connection, "open_socket", lambda *a, **k: ResetOnSend(real(*a, **k), produces, 2))
        # one connection, two operations on it: the second Produce goes out right behind the first, whose
        # answer cannot be back yet, and the third history waits in the same pump for a free place
        pipeline = impl.executor.new_pipeline(1, 2)
        try:
            traces = pipeline.run(corpus, len(corpus))
        finally:
            pipeline.close()
            impl.delete_topics(pipeline.live_topics)
    assert {t.cut.validity for t in traces if t.cut is not None} == {"unknown"}
