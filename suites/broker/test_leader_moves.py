"""--move-leaders on Apache Kafka started by hand, as a user would (examples/kraft-cluster.sh: the release's jars,
``StorageTool format`` and ``kafka.Kafka server.properties`` per node, default broker configs but the listeners
and the controller quorum), never by ktc's broker class.

One node: the option is one line and the leader-change clauses stay unsupported with its reason.  Three nodes: ktc
moves the leadership of its own topics, the three clauses are judged on the clocks the cluster has, the skew
measured from the LogAppendTime echoes is in the target's record, and a planted fault (a new leader that restamps
the records it took over) fails followers-keep-log-append-time.  Without the option, histories whose partitions
all three nodes lead reach each partition on its leader (client/routing.py); and a request sent to a leader that
has since moved is answered NOT_LEADER_OR_FOLLOWER, then sent again to the new leader and appended once.  Either
way the script leaves no JVM, no listening port and no directory behind.  Measured on a 2-core machine at load 7:
10 s for one node, 40 s for three (start included); at load 45, 3.5 min and 2.3 min.  The two routing tests add
about 3 s of calls to the three nodes' start (20 to 60 s at load 22).
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
from ktc.implementations.kafka.moves.move import Move  # noqa: E402
from ktc.implementations.kafka.moves.survey import LEADER_CLAUSES, Nodes, line, scratch  # noqa: E402
from ktc.judge.harness import judge_one  # noqa: E402
from ktc.kafka.client import leadership, messages, routing, wire  # noqa: E402
from ktc.kafka.client.multiplex import single  # noqa: E402
from ktc.kafka.client.security import PLAINTEXT  # noqa: E402
from ktc.reference.types import (  # noqa: E402
    Advance,
    Batch,
    CreateTopic,
    Fetch,
    FetchResult,
    History,
    ListOffsets,
    ListOffsetsResult,
    Produce,
    Record,
    TopicConfig,
)
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
        cuts = [seen[3] for seen in impl.executor.seen.values()]  # where a run stopped early, and why
    finally:
        impl.close()
    assert set(verdicts["kip"]) == set(LEADER_CLAUSES), verdicts
    assert set(verdicts["kip"].values()) <= {"pass", "fail"}, verdicts
    assert verdicts["kafka-4"]["KIP-32.followers-keep-log-append-time"] == "pass", verdicts
    assert moves["moves"] == 3 and len(moves["nodes"]) == 3 and moves["max_skew_ms"] is not None, (moves, cuts)


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


# ---- requests reach each partition's leader (client/routing.py), with and without --move-leaders -------------


def spread_history(partitions: int = 3) -> History:
    """A topic of ``partitions`` partitions (their leaders spread over the nodes), each produced to, read and
    listed, every request after a local operation (an Advance): the next request's leader is found again."""
    ops: list = [CreateTopic("t", TopicConfig(partitions=partitions))]
    for p in range(partitions):
        batch = Batch((Record(wire.now_ms(), b"k", b"v"),))
        ops += [Advance(1), Produce("t", batch, p), Advance(1), Fetch("t", p), Advance(1), ListOffsets("t", -1, p)]
    return History("kafka-4", tuple(ops), start_ms=wire.now_ms())


def test_histories_by_address_reach_each_partition_on_its_leader(three_nodes):
    impl = adapter(three_nodes, move_leaders=False)
    try:
        histories = [spread_history() for _ in range(4)]
        traces = impl.run(histories)
        leaders = impl.executor.pipeline.leaders
        notes = impl.probed_notes()
    finally:
        impl.close()
    for trace in traces:
        assert trace.cut is None, trace.cut
        codes = [getattr(result, "error_code", 0) for result in trace]
        assert codes == [0] * len(codes), codes
        offsets = [result.offset for result in trace if isinstance(result, ListOffsetsResult)]
        assert offsets == [1, 1, 1], offsets
    assert len(set(leaders.nodes.values())) == 3, f"the partitions' leaders are not spread: {leaders.nodes}"
    assert not any("no scratch topic" in note for note in notes), notes


def test_a_request_sent_to_a_leader_that_moved_is_sent_again_to_the_new_one(three_nodes):
    """The leader moves between two produces; the second goes first to the old leader (what ``Leaders`` last
    knew), which answers NOT_LEADER_OR_FOLLOWER: Metadata is asked again and the produce sent to the new
    leader, appended once."""
    impl = adapter(three_nodes)
    survey = impl.executor.survey()
    first, then = survey.nodes[0], survey.nodes[1]
    name = scratch(impl, "moved")
    mover, leaders, sent = Move(impl, survey, History("kip", ())), routing.Leaders(), []
    try:
        with Nodes(survey.addresses, PLAINTEXT) as mover.nodes:
            client = mover.nodes[first]
            assert leadership.create_assigned(client, name, [[first, then]], {})[0] == 0
            mover.nodes.wait_leader(name, 0, first)
            assert produce_on_leader(client, name, leaders, sent).error_code == 0
            mover.move(name, 0, then, [first, then])
            second = produce_on_leader(client, name, leaders, sent)
            latest = client.peer(survey_address(survey, then)).list_offsets(name, wire.LATEST_TIMESTAMP)
    finally:
        impl.delete_topics([name])
        impl.close()
    old, new = survey_address(survey, first), survey_address(survey, then)
    assert (second.error_code, second.base_offset, latest.offset) == (0, 1, 2), (second, latest)
    # the old leader's Metadata may lag the move by an answer or two: each such attempt went to the old leader
    assert sent[:2] == [old, old] and set(sent[1:-1]) == {old} and sent[-1] == new, sent
    assert leaders.node((name, 0)) == then


def survey_address(survey, node: int) -> tuple[str, int]:
    host, _, port = survey.addresses[node].rpartition(":")
    return host, int(port)


def produce_on_leader(client: wire.Client, name: str, leaders: routing.Leaders, sent: list):
    """One produce through routing.on_leader, each Produce's broker logged in ``sent``."""
    batch = wire.encode_batch(Batch((Record(wire.now_ms(), b"k", b"v"),)))
    steps = routing.on_leader(
        lambda: single(messages.produce(name, batch)), (name, 0), leaders, lambda out: out.error_code
    )
    return client.perform(logged(steps, sent))


def logged(steps, sent: list):
    answer = None
    try:
        while True:
            step = steps.send(answer)
            if isinstance(step, messages.Call) and step.api == "Produce":
                sent.append(step.to)
            answer = yield step
    except StopIteration as done:
        return done.value
