"""ktc/judge/shrink.py: greedy bulk shrinking, and its deadline (a broker's round can take a minute)."""

import time

from ktc.judge.shrink import shrink
from ktc.reference.types import CreateTopic, Fetch, History, Produce
from ktc.suites._support import NOW, batch

HISTORY = History(
    "kafka-4", (CreateTopic("t"), Produce("t", batch(NOW + 5, NOW + 7)), Fetch("t"), Fetch("t")), start_ms=NOW
)


def every_candidate_fails(candidates):
    return [True] * len(candidates)


def test_a_disagreement_shrinks_to_the_smallest_history_that_still_fails():
    smallest, rounds = shrink(HISTORY, every_candidate_fails)
    assert smallest.ops == (CreateTopic("t"),) and rounds >= 3


def test_no_round_begins_after_the_deadline():
    smallest, rounds = shrink(HISTORY, every_candidate_fails, deadline=time.monotonic() - 1)
    assert (smallest, rounds) == (HISTORY, 0)
