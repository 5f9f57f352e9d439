"""Kafka's own ListOffsets tests, pinned (kafka_own_tests.py says how a row restates one): produces and
lookups in the order of ListOffsetsRequestTest, LogSegmentTest and UnifiedLogTest, each answer as Kafka's test
asserts it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ktc.judge.harness import assert_conforms
from ktc.reference import run
from ktc.reference.types import (
    NO_TIMESTAMP,
    NONE,
    Batch,
    CreateTopic,
    History,
    ListOffsets,
    Produce,
    TopicConfig,
)
from ktc.suites._support import NOW, batch
from ktc.suites.pinned.kafka_own_tests import BOTH_3X, K35, K36, LORT, LST, ULT, Fact, cite, rows, singles

pytestmark = pytest.mark.pinned

pytestmark = pytest.mark.pinned

# ---- 3. ListOffsets: produces and lookups in Kafka's order -----------------------------------------
EARLIEST, LATEST, MAX_TIMESTAMP = -2, -1, -3


@dataclass(frozen=True)
class Ask:
    target: int
    offset: int | None
    timestamp: int | None = None  # only where Kafka's test asserts it


@dataclass(frozen=True)
class Lookup(Fact):
    steps: tuple[Batch | Ask, ...] = ()


T1 = NOW
# The LogSegmentTest segment starts at offset 40: a first batch of 40 records without timestamps stands in
# for offsets 0-39 so Kafka's offsets stay verbatim (records without a timestamp never match a target).
SEGMENT_40 = (batch(*[NO_TIMESTAMP] * 40), *singles(*range(400, 500, 10)))
LOOKUPS = [
    Lookup(
        **cite(LORT, "testResponseIncludesLeaderEpoch", BOTH_3X),
        profiles=K35 + K36,
        clause="KIP-33.list-offsets-max-timestamp",  # 9 producer records at send time, then one at now + 10
        steps=(batch(*[NOW] * 9), batch(NOW + 10), Ask(0, 0), Ask(EARLIEST, 0), Ask(LATEST, 10), Ask(MAX_TIMESTAMP, 9)),
    ),
    Lookup(
        **cite(ULT, "testFetchOffsetByTimestampIncludesLeaderEpoch", BOTH_3X),
        profiles=K35 + K36,
        clause="KIP-33.list-offsets-first-offset-at-or-after",
        steps=(
            Ask(0, -1, -1),
            *singles(T1, T1 + 1),
            Ask(T1, 0, T1),
            Ask(T1 + 1, 1, T1 + 1),
            Ask(EARLIEST, 0, -1),
            Ask(LATEST, 2, -1),
        ),
    ),
    Lookup(
        **cite(ULT, "testFetchOffsetByTimestampWithMaxTimestampIncludesTimestamp", BOTH_3X),
        profiles=K35 + K36,
        clause="KIP-33.list-offsets-max-timestamp",
        steps=(Ask(0, -1, -1), *singles(T1, T1 + 1, T1), Ask(MAX_TIMESTAMP, 1, T1 + 1)),
    ),
    Lookup(
        **cite(LST, "testFindOffsetByTimestamp", BOTH_3X),
        profiles=K35 + K36,
        clause="KIP-33.list-offsets-not-found",
        steps=(
            *SEGMENT_40,
            Ask(MAX_TIMESTAMP, None, 490),
            Ask(420, 42),
            Ask(421, 43),
            Ask(430, 43),
            Ask(431, 44),
            Ask(491, -1),
            Ask(401, 41),
            Ask(399, 40),
        ),
    ),
]


def lookup_history(profile: str, fact: Lookup) -> History:
    ops = [ListOffsets("t", s.target) if isinstance(s, Ask) else Produce("t", s) for s in fact.steps]
    return History(profile, (CreateTopic("t", TopicConfig()), *ops), start_ms=NOW)


@pytest.mark.clause(
    "KIP-33.list-offsets-first-offset-at-or-after",
    "KIP-33.list-offsets-not-found",
    "KIP-33.list-offsets-first-segment-only",
    "KIP-33.list-offsets-latest",
    "KIP-33.list-offsets-earliest",
    "KIP-33.list-offsets-max-timestamp",
)
@pytest.mark.parametrize("fact", rows(LOOKUPS))
def test_list_offsets_answers_are_what_kafkas_test_expects(impl, profile, fact):
    history = lookup_history(profile, fact)
    answers = [r for op, r in zip(history.ops, run(history)) if isinstance(op, ListOffsets)]
    asks = [s for s in fact.steps if isinstance(s, Ask)]
    seen = [
        (
            a.target,
            r.error_code,
            r.offset if a.offset is not None else None,
            r.timestamp if a.timestamp is not None else None,
        )
        for a, r in zip(asks, answers)
    ]
    assert seen == [(a.target, NONE, a.offset, a.timestamp) for a in asks], fact.source
    assert_conforms(impl, history)
