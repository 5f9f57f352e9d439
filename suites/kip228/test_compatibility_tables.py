"""KIP-228's producer/broker and consumer tables, transcribed row by row from the KIP text.

Cells are sets: "(error) Error or Records this as NO_TIMESTAMP (-1L)" allows both outcomes.
The 'new broker' column is also run through every implementation (kip profile, sentinel
Long.MIN_VALUE).  The table functions themselves are the implementation's ``kip228_tables`` where it
offers them (implementations/protocol.py), else the reference's; the consumer table has no broker,
so an implementation without them is ``unsupported`` there.
"""
import pytest

from ktc.harness import assert_conforms
from reference import kip228, run
from reference import kip228 as reference_tables
from reference.types import INT64_MIN, History, TopicConfig
from suites._support import NOW, one_append

MIN, ERR = INT64_MIN, kip228.ERROR
OLD_NT, NEW_NT = kip228.OLD_SENTINEL, kip228.NEW_SENTINEL

# (what the producer sends, isTimestampExtended) -> (old broker records, new broker records)
PRODUCER_TABLE = [
    ((-1, False), ({OLD_NT}, {NEW_NT})),          # old producer sends NO_TIMESTAMP (-1L)
    ((MIN, True), ({ERR, OLD_NT}, {NEW_NT})),     # new producer sends NO_TIMESTAMP (Long.MIN_VALUE)
    ((-1, True), ({ERR, OLD_NT}, {("timestamp", -1)})),  # new producer sends -1L ms
]
# (stored timestamp, isTimestampExtended) -> (old consumer reads, new consumer reads)
CONSUMER_TABLE = [
    ((-1, False), ({OLD_NT}, {NEW_NT})),
    ((-1, True), ({ERR, OLD_NT}, {("timestamp", -1)})),
    ((MIN, True), ({ERR, OLD_NT}, {NEW_NT})),
]


@pytest.mark.clause("KIP-228.producer-broker-table")
@pytest.mark.parametrize("row", PRODUCER_TABLE, ids=["old-producer-minus-one", "new-producer-min", "new-producer-minus-one-ms"])
def test_producer_table_row_holds(impl, profile, row):
    (sent, extended), (old, new) = row
    kip228 = getattr(impl, "kip228_tables", None) or reference_tables
    assert kip228.broker_records(sent, extended, "old") == old
    assert kip228.broker_records(sent, extended, "new") == new
    history = History(profile, one_append(profile, TopicConfig(), sent, timestamp_extended=extended).ops,
                      start_ms=NOW, no_timestamp=MIN)
    stored = run(history)[2].batches[0].records[0].timestamp
    assert {kip228.stored_as(stored, MIN)} == new, "the model's new broker disagrees with the KIP table"
    assert_conforms(impl, history)


@pytest.mark.clause("KIP-228.consumer-table")
@pytest.mark.parametrize("row", CONSUMER_TABLE, ids=["minus-one-plain", "minus-one-extended", "min-extended"])
def test_consumer_table_row_holds(impl, row):
    (ts, extended), (old, new) = row
    kip228 = getattr(impl, "kip228_tables", None)
    if kip228 is None:
        pytest.skip(f"unsupported: {impl.name} offers no kip228_tables (a consumer's reading of KIP-228)")
    assert kip228.consumer_reads(ts, extended, "old") == old
    assert kip228.consumer_reads(ts, extended, "new") == new
