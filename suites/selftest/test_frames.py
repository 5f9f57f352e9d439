"""A broker's verdicts, judged on placements of a history, point at the history's own operations."""

from ktc.checks.verdicts import Mismatch, Validity, Verdict
from ktc.judge.frames import frame_map, in_history_frame
from ktc.reference.types import Advance, CreateTopic, ElectLeader, Fetch, History, Produce, StepClock, TopicConfig
from ktc.suites._support import NOW, batch

ORIGINAL = History(
    "kip",
    (
        CreateTopic("t", TopicConfig()),
        Produce("t", batch(NOW)),
        Advance(5),
        ElectLeader("t", 1),
        Produce("t", batch(NOW)),
        Fetch("t"),
    ),
    NOW,
    (0, 7),
)
PLACED = History(
    "kip",
    (
        CreateTopic("t", TopicConfig()),
        Advance(3),
        Produce("t", batch(NOW)),
        Advance(9),
        ElectLeader("t", 1),
        Advance(1),
        StepClock(0, -2),
        Produce("t", batch(NOW)),
        Fetch("t"),
    ),
    NOW,
    (0, 7),
)


def test_placed_operations_map_to_the_history_s_and_a_placed_clock_op_to_the_operation_it_precedes():
    assert frame_map(PLACED, ORIGINAL) == [0, 1, 1, 3, 3, 4, 4, 4, 5]


def test_a_verdict_at_a_placed_operation_names_the_history_s_operation_in_its_index_and_its_text():
    failed = Verdict("c", Validity.FAIL, 1, Mismatch(8, "record 0 as appended at op #7", 1, 2))
    (moved,) = in_history_frame([failed], PLACED, ORIGINAL)
    assert (moved.mismatch.op_index, moved.mismatch.what) == (5, "record 0 as appended at op #4")


def test_a_placement_that_does_not_keep_the_history_s_operations_leaves_the_verdicts_as_they_are():
    failed = Verdict("c", Validity.FAIL, 1, Mismatch(2, "x", 1, 2))
    assert in_history_frame([failed], History("kip", PLACED.ops[:3], NOW, (0, 7)), ORIGINAL) == [failed]
