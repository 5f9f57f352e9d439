"""A producer, judged on the bytes it puts on the wire before the broker rewrites them (the capture proxy):
each record's CreateTime (first timestamp + delta) is the application's, or the client's clock over the
[call, acknowledgement] interval; the batch header's MaxTimestamp is the max of its records; and a producer
never sets the LogAppendTime attribute bit, on a LogAppendTime topic either.  Every codec."""

from __future__ import annotations

import pytest

from ktc.judge.declined import unsupported
from ktc.reference import clients as model
from ktc.reference.clients import LOG_APPEND_TIME
from ktc.suites.clients.observe import CODECS, T0, produced

GIVEN = (T0 + 5_000, T0 + 9_000, T0 + 1_000)  # the max in the middle: neither the first nor the last record
MIXED = (T0 + 5_000, None, T0 + 1_000)  # one record the application gave no timestamp
CASES = [pytest.param(GIVEN, codec, id=f"given-{codec}") for codec in CODECS] + [
    pytest.param(MIXED, "none", id="one-without-timestamp")
]
LAT_TOPIC = {"message.timestamp.type": LOG_APPEND_TIME}

pytestmark = pytest.mark.pinned


def sent_records(seen, library: str, codec: str = "none") -> list[int]:
    said = seen.answer.get("error") or {}
    if codec != "none" and said.get("kind") == "local" and not seen.sent:  # a codec it lacks, not a timestamp rule
        raise unsupported(f"{library} does not produce {codec} batches here: {said.get('message', '')[:150]}")
    assert seen.answer["ok"], f"{library} refused to produce {seen.given}: {seen.answer['error']['message'][:200]}"
    assert seen.sent, f"{library} acknowledged {seen.given} but no Produce request for it reached the proxy"
    return seen.records


@pytest.mark.clause("KIP-32.client-producer-create-time")
@pytest.mark.parametrize("given, codec", CASES)
def test_a_producer_sends_each_record_with_the_timestamp_it_was_given(impl, profile, given, codec):
    seen = produced(impl, given, codec)
    sent = sent_records(seen, impl.name, codec)
    assert len(sent) == len(given), f"{impl.name} sent {len(sent)} records for {len(given)} ({codec})"
    wrong = [(g, s) for g, s in zip(given, sent) if not model.sent_timestamp_allowed(g, s, seen.interval)]
    assert not wrong, (
        f"{impl.name} ({codec}) sent CreateTime {wrong[0][1]} for a record given "
        f"{'no timestamp' if wrong[0][0] is None else wrong[0][0]} (call interval {list(seen.interval)})"
    )


@pytest.mark.clause("KIP-32.client-producer-max-timestamp")
@pytest.mark.parametrize("given, codec", CASES)
def test_a_producer_writes_the_max_of_its_records_as_the_batch_max_timestamp(impl, profile, given, codec):
    seen = produced(impl, given, codec)
    sent_records(seen, impl.name, codec)
    wrong = [
        (b.max_timestamp, [r.create_time for r in b.records])
        for b in seen.batches
        if b.records and b.max_timestamp != model.header_max([r.create_time for r in b.records])
    ]
    assert not wrong, f"{impl.name} ({codec}) wrote MaxTimestamp {wrong[0][0]} on a batch of records {wrong[0][1]}"


@pytest.mark.clause("KIP-32.client-producer-create-time-type")
@pytest.mark.parametrize("configs", [{}, LAT_TOPIC], ids=["create-time-topic", "log-append-time-topic"])
def test_a_producer_never_sets_the_log_append_time_bit(impl, profile, configs):
    seen = produced(impl, GIVEN, "none", configs)
    sent_records(seen, impl.name)
    marked = [b.attributes for b in seen.batches if b.timestamp_type.value == LOG_APPEND_TIME]
    assert not marked, f"{impl.name} sent a batch with attributes {marked[0]:#06x}: the LogAppendTime bit set"
