"""What a client hands the application for the broker's answers that are not records: a ListOffsets by
timestamp the broker answers with -1 (no record at or after it) is "no offset", and a batch the broker
rejects with INVALID_TIMESTAMP (32) and record_errors is a non-retriable error naming the record, sent once:
not retried until a timeout, not swallowed."""

from __future__ import annotations

import pytest

from ktc.judge.declined import unsupported
from ktc.kafka.client.wire import now_ms
from ktc.reference.types import Batch, Record
from ktc.suites.clients.observe import T0, ask, client_of, produce, served

pytestmark = pytest.mark.pinned
INVALID_TIMESTAMP = 32
ONE_HOUR = 3_600_000


def looked_up(impl) -> tuple[dict, dict]:
    """(the answer for a target after every record, the answer for one before them) on a fresh topic."""
    client = client_of(impl)

    def observe():
        seen = served(impl, {}, [Batch(tuple(Record(T0 + i * 1_000, None, b"v") for i in range(3)))], "lookup")
        after = ask(client, "offsets_for_times", topic=seen.topic, partition="0", timestamp=str(T0 + 10**9))
        before = ask(client, "offsets_for_times", topic=seen.topic, partition="0", timestamp=str(T0))
        return after, before

    return client.observed("lookup", observe)


@pytest.mark.clause("KIP-33.client-lookup-not-found")
def test_a_lookup_the_broker_answers_with_minus_one_is_no_offset(impl, profile):
    after, before = looked_up(impl)
    said = after.get("error") or {}
    if said.get("kind") == "local" and said.get("message", "").startswith("unsupported op"):  # the contract's word
        raise unsupported(f"{impl.name} has no lookup by timestamp: {said['message'][:150]}")
    assert after["ok"], f"{impl.name} failed a lookup past the last record: {after['error']['message'][:200]}"
    assert not after["found"], (
        f"{impl.name} handed the application offset {after.get('offset')} for a timestamp past every record "
        f"(the broker answered -1: no offset); for one before them it found offset {before.get('offset')}"
    )


def rejected(impl):
    """The client produces [now, ten hours ago, now] to a topic whose before.max.ms is one hour (observed once)."""
    client = client_of(impl)

    def observe():
        now = now_ms()
        given = (now, now - 10 * ONE_HOUR, now)
        return produce(client, given, "none", {"message.timestamp.before.max.ms": ONE_HOUR}), given

    return client.observed("rejected", observe)


@pytest.mark.clause("KIP-937.client-rejection-reaches-application")
def test_a_rejected_batch_reaches_the_application_as_a_non_retriable_error_naming_the_record(impl, profile):
    seen, given = rejected(impl)
    assert not seen.answer["ok"], f"{impl.name} reported {seen.given} produced: the broker's rejection was swallowed"
    error = seen.answer["error"]
    assert error["kind"] != "timeout", f"{impl.name} timed out ({error['message'][:150]}) instead of reporting 32"
    assert error["code"] == INVALID_TIMESTAMP, f"{impl.name} reported {error['code']} ({error['message'][:150]})"
    assert error["retriable"] is not True, f"{impl.name} calls INVALID_TIMESTAMP retriable ({error['message'][:150]})"
    sends = [s for s in seen.sent for b in s.batches for r in b.records if r.create_time == given[1]]
    assert len(sends) == 1, f"{impl.name} sent the rejected record {len(sends)} times: it retried a non-retriable error"
    assert error["record"] in (None, 1), f"{impl.name} named record {error['record']}; the broker named record 1"
