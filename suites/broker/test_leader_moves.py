"""--move-leaders on Apache Kafka started by hand, as a user would (examples/kraft-cluster.sh: the release's jars,
``StorageTool format`` and ``kafka.Kafka server.properties`` per node, default broker configs but the listeners
and the controller quorum), never by ktc's broker class.

One node: the option is one line and the leader-change clauses stay unsupported with its reason.  Three nodes: ktc
moves the leadership of its own topics, the three clauses are judged on the clocks the cluster has, the skew
measured from the LogAppendTime echoes is in the target's record, and a planted fault (a new leader that restamps
the records it took over) fails followers-keep-log-append-time.  Either way the script leaves no JVM, no
listening port and no directory behind.  Measured on a 2-core machine at load 7: 10 s for one node, 40 s for three
(start included); at load 45, 3.5 min and 2.3 min.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.implementations.families.bootstrap import TARGET  # noqa: E402
from ktc.implementations.kafka.judge.capabilities import NOT_ON_A_BROKER  # noqa: E402
from ktc.implementations.kafka.moves import move as moving  # noqa: E402
from ktc.implementations.kafka.moves.survey import LEADER_CLAUSES, line  # noqa: E402
from ktc.judge.harness import judge_one  # noqa: E402
from ktc.reference.types import FetchResult  # noqa: E402
from ktc.suites.kip32.test_log_append_time_across_leader_moves import round_trip  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-leader-moves")  # the module on one worker: its fixtures once
SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "kraft-cluster.sh"
START_S = 600  # the script's own bound on the nodes' start (KRAFT_WAIT_S), generous for a loaded machine


def free_base() -> int:
    """A base port below the ephemeral range (where outgoing connections take theirs) whose listeners, +0..+2 and
    +101..+103 (examples/kraft-cluster.sh), can all be bound now."""
    for _ in range(100):
        base = random.randrange(20_000, 32_000)
        if all(bindable(base + d) for d in (0, 1, 2, 101, 102, 103)):
            return base
    pytest.fail("no free ports for the cluster")


def bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free(port: int) -> bool:
    """Nothing listens there."""
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture(scope="module")
def one_node(tmp_path_factory):
    yield from by_hand(tmp_path_factory, 1)


@pytest.fixture(scope="module")
def three_nodes(tmp_path_factory):
    yield from by_hand(tmp_path_factory, 3)


def by_hand(tmp_path_factory, nodes: int):
    """The script, started with no command (it waits), in a TMPDIR of its own; its bootstrap once it is up."""
    tmp, base = tmp_path_factory.mktemp("kraft"), free_base()
    env = {**os.environ, "TMPDIR": str(tmp), "KRAFT_WAIT_S": str(START_S)}
    script = subprocess.Popen(
        [str(SCRIPT), "-n", str(nodes), "-p", str(base)], env=env, stderr=subprocess.PIPE, text=True
    )
    said = script.stderr.readline()
    try:
        if "up in" not in said:
            pytest.fail(f"examples/kraft-cluster.sh did not start {nodes} nodes: {said}{script.stderr.read()}")
        yield f"127.0.0.1:{base}"
    finally:
        script.send_signal(signal.SIGTERM)
        code = script.wait(timeout=60)
        assert code == 143, f"the script ended with {code}, not by the SIGTERM it was sent"
        assert list(tmp.iterdir()) == [], "the script left its directory behind"
        listeners = [base + n for n in range(nodes)] + [base + 101 + n for n in range(nodes)]
        assert all(free(port) for port in listeners), "a node still listens"


def adapter(bootstrap: str, move_leaders: bool = True):
    return TARGET.implementation({"kafka_bootstrap": bootstrap, "move_leaders": move_leaders})


def test_without_the_option_the_leader_change_clauses_name_it(one_node):
    impl = adapter(one_node, move_leaders=False)
    try:
        reasons = {impl.capabilities().reason_unsupported(c) for c in LEADER_CLAUSES}
    finally:
        impl.close()
    assert reasons == {NOT_ON_A_BROKER[LEADER_CLAUSES[0]]} and "--move-leaders" in reasons.pop()


def test_on_a_single_broker_the_option_is_one_line_and_the_clauses_stay_unsupported(one_node):
    said = line(one_node)
    impl = adapter(one_node)
    try:
        reasons = {impl.capabilities().reason_unsupported(c) for c in LEADER_CLAUSES}
        clock = impl.target()["clock"]
    finally:
        impl.close()
    assert "\n" not in said and "1 broker" in said and "stay unsupported" in said, said
    assert len(reasons) == 1 and "1 broker" in reasons.pop()
    assert "1 broker" in clock["leader_moves"]["refused"]


def judged(impl, profile: str) -> dict[str, str]:
    history = round_trip(profile, (0, 0, 0))
    [trace] = impl.run([history])
    return {v.clause: v.validity.value for v in judge_one(history, trace, LEADER_CLAUSES)}


def test_a_cluster_started_by_hand_judges_the_leader_change_clauses_on_its_measured_clocks(three_nodes):
    impl = adapter(three_nodes)
    try:
        assert impl.executor.survey().refused is None
        verdicts = {profile: judged(impl, profile) for profile in ("kip", "kafka-4")}
        moves = impl.target()["clock"]["leader_moves"]
    finally:
        impl.close()
    assert set(verdicts["kip"]) == set(LEADER_CLAUSES), verdicts
    assert set(verdicts["kip"].values()) <= {"pass", "fail"}, verdicts
    assert verdicts["kafka-4"]["KIP-32.followers-keep-log-append-time"] == "pass", verdicts
    assert moves["moves"] == 3 and len(moves["nodes"]) == 3 and moves["max_skew_ms"] is not None, moves


def test_a_new_leader_that_restamps_the_records_it_took_over_fails_followers_keep(three_nodes, monkeypatch):
    """Planted: every fetch shows the first record 1 ms earlier than it was stamped, as a new leader that
    re-stamped what it took over would."""
    real = moving.fetch_result

    def restamped(out):
        result = real(out)
        first = result.batches[0]
        records = (replace(first.records[0], timestamp=first.records[0].timestamp - 1), *first.records[1:])
        return FetchResult((replace(first, records=records), *result.batches[1:]), result.error_code)

    monkeypatch.setattr(moving, "fetch_result", restamped)
    impl = adapter(three_nodes)
    try:
        verdicts = judged(impl, "kafka-4")
    finally:
        impl.close()
    assert verdicts["KIP-32.followers-keep-log-append-time"] == "fail", verdicts
