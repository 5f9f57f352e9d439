"""KIP-228's producer/broker and consumer tables, transcribed row by row from the KIP text.

Cells are sets: "(error) Error or Records this as NO_TIMESTAMP (-1L)" allows both outcomes.
The 'new broker' column is also run through every implementation (kip profile, sentinel
Long.MIN_VALUE).  The table functions themselves are the implementation's ``kip228_tables`` where it
offers them (implementations/protocol.py), else the reference's; the consumer table has no broker,
so an implementation without them is ``unsupported`` there.
"""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ktc.judge.declined import unsupported
from ktc.judge.harness import assert_conforms
from ktc.reference import kip228, run
from ktc.reference import kip228 as reference_tables
from ktc.reference.types import INT64_MAX, INT64_MIN, History, TopicConfig
from ktc.suites._support import NOW, one_append

MIN, ERR = INT64_MIN, kip228.ERROR
OLD_NT, NEW_NT = kip228.OLD_SENTINEL, kip228.NEW_SENTINEL

# (what the producer sends, isTimestampExtended) -> (old broker records, new broker records)
PRODUCER_TABLE = [
    ((-1, False), ({OLD_NT}, {NEW_NT})),  # old producer sends NO_TIMESTAMP (-1L)
    ((MIN, True), ({ERR, OLD_NT}, {NEW_NT})),  # new producer sends NO_TIMESTAMP (Long.MIN_VALUE)
    ((-1, True), ({ERR, OLD_NT}, {("timestamp", -1)})),  # new producer sends -1L ms
]
# (stored timestamp, isTimestampExtended) -> (old consumer reads, new consumer reads)
CONSUMER_TABLE = [
    ((-1, False), ({OLD_NT}, {NEW_NT})),
    ((-1, True), ({ERR, OLD_NT}, {("timestamp", -1)})),
    ((MIN, True), ({ERR, OLD_NT}, {NEW_NT})),
]


@pytest.mark.clause("KIP-228.producer-broker-table")
@pytest.mark.parametrize(
    "row", PRODUCER_TABLE, ids=["old-producer-minus-one", "new-producer-min", "new-producer-minus-one-ms"]
)
def test_producer_table_row_holds(impl, profile, row):
    (sent, extended), (old, new) = row
    kip228 = getattr(impl, "kip228_tables", None) or reference_tables
    sent = fresh(sent)
    assert kip228.broker_records(sent, extended, "old") == old
    assert kip228.broker_records(sent, extended, "new") == new
    history = History(
        profile,
        one_append(profile, TopicConfig(), sent, timestamp_extended=extended).ops,
        start_ms=NOW,
        no_timestamp=MIN,
    )
    stored = run(history)[2].batches[0].records[0].timestamp
    assert {kip228.stored_as(stored, MIN)} == new, "the model's new broker disagrees with the KIP table"
    assert_conforms(impl, history)


@pytest.mark.clause("KIP-228.consumer-table")
@pytest.mark.parametrize("row", CONSUMER_TABLE, ids=["minus-one-plain", "minus-one-extended", "min-extended"])
def test_consumer_table_row_holds(impl, row):
    (ts, extended), (old, new) = row
    kip228, ts = own_tables(impl), fresh(ts)
    assert kip228.consumer_reads(ts, extended, "old") == old
    assert kip228.consumer_reads(ts, extended, "new") == new


# Both tables list only the sentinel-like rows; any other timestamp is a timestamp to old and new
# software alike ("there should be is no reason to fail ... working with negative timestamps").
OTHER_TIMESTAMPS = st.one_of(st.sampled_from([-2, 0, 1, MIN + 1, INT64_MAX]), st.integers(MIN, INT64_MAX)).filter(
    lambda ts: ts not in (-1, MIN)
)


@pytest.mark.clause("KIP-228.producer-broker-table", "KIP-228.consumer-table")
@example(ts=-2, extended=False)
@example(ts=0, extended=True)
@given(ts=OTHER_TIMESTAMPS, extended=st.booleans())
def test_a_timestamp_that_is_no_sentinel_is_recorded_and_read_as_itself(impl, ts, extended):
    kip228 = own_tables(impl)
    for side in ("old", "new"):
        assert kip228.broker_records(ts, extended, side) == {("timestamp", ts)}
        assert kip228.consumer_reads(ts, extended, side) == {("timestamp", ts)}


@pytest.mark.clause("KIP-228.producer-broker-table", "KIP-228.consumer-table")
@example(ts=-2, sentinel=-1)
@example(ts=0, sentinel=-1)
@given(ts=st.one_of(st.sampled_from([-1, MIN]), OTHER_TIMESTAMPS), sentinel=st.sampled_from([-1, MIN]))
def test_a_stored_timestamp_is_no_timestamp_exactly_when_it_equals_the_sentinel(impl, ts, sentinel):
    expected = ("no-timestamp", ts) if ts == sentinel else ("timestamp", ts)
    assert own_tables(impl).stored_as(fresh(ts), fresh(sentinel)) == expected


def own_tables(impl):
    """The implementation's KIP-228 tables; without them the clause is unsupported, with the reason."""
    tables = impl.kip228_tables
    if tables is None:
        raise unsupported(f"{impl.name} offers no kip228_tables (a consumer's reading of KIP-228)")
    return tables


def fresh(n: int) -> int:
    """An int equal to ``n`` but not the same object: an implementation must compare values, not identities."""
    return int(str(n))
