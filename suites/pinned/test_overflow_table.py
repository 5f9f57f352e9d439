"""kafka-semantics.md section 2: the overflow table, verified by running LogValidator's exact
expression under JDK 17 with now = 1.76e12.  Pinned case by case under kafka-3.6 and kafka-4.

The table is external ground truth (a JVM ran it); the reference must reproduce it, and every
implementation must then agree with the reference on the same histories.
"""

import pytest

from ktc.judge.harness import assert_conforms
from ktc.reference import run
from ktc.reference.types import (
    INT64_MAX,
    INT64_MIN,
    ONE_HOUR_MS,
    Batch,
    CreateTopic,
    Fetch,
    History,
    Produce,
    Record,
    TopicConfig,
)

pytestmark = pytest.mark.pinned  # fixed cells: judges the pinned_only profiles too
NOW = 1_760_000_000_000
TIMESTAMPS = {
    "Long.MIN_VALUE": INT64_MIN,
    "-2": -2,
    "0": 0,
    "now+1h+1": NOW + ONE_HOUR_MS + 1,
    "Long.MAX_VALUE": INT64_MAX,
}
LIMITS = {"MAX": INT64_MAX, "1h": ONE_HOUR_MS, "0": 0}
# before / after -> accepted? per timestamp column, as printed in the research note.
TABLE = {
    ("MAX", "MAX"): "ok ok ok ok ok",
    ("MAX", "1h"): "REJ ok ok REJ REJ",
    ("1h", "MAX"): "ok REJ REJ ok ok",
    ("1h", "1h"): "REJ REJ REJ REJ REJ",
    ("0", "0"): "REJ REJ REJ REJ REJ",
}
CASES = [
    (before, after, column, cell == "ok")
    for (before, after), cells in TABLE.items()
    for column, cell in zip(TIMESTAMPS, cells.split())
]


def history(profile: str, before: str, after: str, column: str) -> History:
    config = TopicConfig(before_max_ms=LIMITS[before], after_max_ms=LIMITS[after])
    batch = Batch((Record(TIMESTAMPS[column]),))
    return History(profile, (CreateTopic("t", config), Produce("t", batch), Fetch("t")), start_ms=NOW)


@pytest.mark.profiles("kafka-3.6", "kafka-4")
@pytest.mark.clause("KIP-937.int64-wraparound", "KIP-937.before-bound", "KIP-937.after-bound")
@pytest.mark.parametrize("before,after,column,accepted", CASES, ids=[f"{b}/{a}-{c}" for b, a, c, _ in CASES])
def test_overflow_table_cell_holds(impl, profile, before, after, column, accepted):
    h = history(profile, before, after, column)
    assert (run(h)[1].error_code == 0) == accepted, "reference disagrees with the JVM-verified table"
    assert_conforms(impl, h)


@pytest.mark.profiles("kafka-3.6", "kafka-4")
@pytest.mark.clause("KIP-937.int64-wraparound")
@pytest.mark.parametrize("before", ["MAX", "1h", "0"])
def test_now_plus_long_min_passes_every_configuration(impl, profile, before):
    """ts = now + Long.MIN_VALUE makes diff = Long.MIN_VALUE and -diff = Long.MIN_VALUE: nothing rejects it."""
    for after in LIMITS:
        config = TopicConfig(before_max_ms=LIMITS[before], after_max_ms=LIMITS[after])
        magic = Batch((Record(NOW + INT64_MIN),))
        h = History(profile, (CreateTopic("t", config), Produce("t", magic), Fetch("t")), start_ms=NOW)
        assert run(h)[1].error_code == 0
        assert_conforms(impl, h)
