"""--move-leaders' judging, without a broker: each node's clock window measured from LogAppendTime echoes, and a
history with a leader change placed on those windows and judged by the reference (implementations/kafka/moves/).

The observations are written as a cluster with the given clock offsets would answer them: each operation over
[sent, received] of ktc's clock, each LogAppendTime the leader's clock at an instant inside.  The offsets are
never handed to the judging: it sees only what a broker by address shows.
"""

import pytest

from ktc.implementations.kafka.judge.observe import Observed
from ktc.implementations.kafka.moves import clocks
from ktc.implementations.kafka.moves.run import judged
from ktc.judge.harness import judge_one
from ktc.reference.types import (
    Ack,
    CreateTopic,
    CreateTopicResult,
    ElectLeader,
    Fetch,
    FetchResult,
    History,
    Produce,
    ProduceResult,
    StoredBatch,
    StoredRecord,
    TopicConfig,
)
from ktc.suites._support import LAT, NOW, batch

CLAUSES = (
    "KIP-32.log-append-time-leader-max",
    "KIP-32.log-append-time-never-backwards",
    "KIP-32.followers-keep-log-append-time",
)
NODES = (1, 2, 3)
RTT = 4  # ms from sent to received


def test_a_window_is_the_intersection_of_every_echo_of_its_node():
    windows = clocks.measured([(1, 1_010, 1_000, 1_004), (1, 2_012, 2_000, 2_020), (2, 995, 1_000, 1_004)])
    assert windows[1] == clocks.Window(6, 10, 2)  # [1010-1004, 1010-1000] and [2012-2020, 2012-2000]
    assert windows[2] == clocks.Window(-9, -5, 1)
    assert clocks.skew_bound(windows) == 19  # node 1 at most +10, node 2 at least -9


def test_echoes_no_one_offset_explains_are_inconsistent_and_said():
    stepped = clocks.measured([(1, 1_000, 1_000, 1_002), (1, 900, 2_000, 2_002)])[1]
    assert not stepped.consistent
    assert "inconsistent" in clocks.describe(clocks.summary({1: stepped}))


def observed_run(offsets: dict[int, int], restamp: int = 0) -> tuple[History, list[Observed], list]:
    """Produce on node 1, move the leadership to node 2, produce, fetch: as a cluster on ``offsets`` answers.
    ``restamp``: the new leader shows the first record's LogAppendTime moved by that much (a planted fault)."""
    ops = (
        CreateTopic("t", TopicConfig(timestamp_type=LAT)),
        Produce("t", batch(NOW)),
        ElectLeader("t", 1),
        Produce("t", batch(NOW)),
        Fetch("t"),
    )
    history = History("kafka-4", ops, start_ms=NOW, clock_offsets=(0, 0, 0))
    first, second = NOW + 10 + offsets[1], NOW + 1_030 + offsets[2]  # stamped 2 ms after each send
    stored = (
        StoredBatch(0, LAT, first + restamp, (StoredRecord(0, first + restamp),)),
        StoredBatch(1, LAT, second, (StoredRecord(1, second),)),
    )
    observed = [
        Observed(CreateTopicResult(0), NOW, NOW + RTT),
        Observed(ProduceResult(0, base_offset=0, log_append_time=first), NOW + 8, NOW + 8 + RTT, first),
        Observed(Ack(), NOW + 20, NOW + 1_000),
        Observed(ProduceResult(0, base_offset=1, log_append_time=second), NOW + 1_028, NOW + 1_028 + RTT, second),
        Observed(FetchResult(stored, 0), NOW + 1_040, NOW + 1_040 + RTT),
    ]
    return history, observed, [None, 1, None, 2, 2]


def verdicts(history: History, observed: list[Observed], nodes: list, profile: str) -> dict:
    history = History(profile, history.ops, history.start_ms, history.clock_offsets)
    trace = judged(history, observed, nodes, {}, NODES)
    return {v.clause: v.validity.value for v in judge_one(history, trace, CLAUSES)}


@pytest.mark.parametrize("judged_under", ["kafka-4", "kip"])
def test_a_move_to_a_clock_ahead_passes_every_leader_change_clause(judged_under):
    history, observed, nodes = observed_run({1: 0, 2: 5_000})
    found = verdicts(history, observed, nodes, judged_under)
    assert set(found.values()) == {"pass"}, found


def test_a_move_to_a_clock_behind_fails_the_kip_texts_clauses_on_the_measured_skew():
    history, observed, nodes = observed_run({1: 0, 2: -5_000})
    found = verdicts(history, observed, nodes, "kip")
    assert found["KIP-32.log-append-time-never-backwards"] == "fail", found
    assert found["KIP-32.log-append-time-leader-max"] == "fail", found
    assert found["KIP-32.followers-keep-log-append-time"] == "pass", found


def test_kafkas_own_profile_holds_the_same_move_to_its_plain_now():
    history, observed, nodes = observed_run({1: 0, 2: -5_000})
    assert verdicts(history, observed, nodes, "kafka-4")["KIP-32.followers-keep-log-append-time"] == "pass"


def test_a_new_leader_that_restamps_old_records_fails_followers_keep_log_append_time():
    history, observed, nodes = observed_run({1: 0, 2: 0}, restamp=-1)
    found = verdicts(history, observed, nodes, "kafka-4")
    assert found["KIP-32.followers-keep-log-append-time"] == "fail", found


def test_a_node_whose_clock_stepped_inside_the_history_leaves_it_undecided():
    history, observed, nodes = observed_run({1: 0, 2: 0})
    again = Produce("t", batch(NOW))
    history = History(history.profile, (*history.ops[:4], again), history.start_ms, history.clock_offsets)
    late = observed[3].exact_now  # a second later, the same stamp: node 2's clock went back a second
    stalled = Observed(ProduceResult(0, base_offset=2, log_append_time=late), NOW + 2_028, NOW + 2_032, late)
    trace = judged(history, [*observed[:4], stalled], [*nodes[:4], 2], {}, NODES)
    assert trace.undecidable
    assert {v.validity.value for v in judge_one(history, trace, CLAUSES)} <= {"unknown"}
