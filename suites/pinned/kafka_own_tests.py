"""Kafka's own timestamp expectations, pinned: each row restates one test of Apache Kafka as data.
This module holds what every such row is (``Fact``, its citation, its pytest parameters); the rows are
test_kafka_produce_tests.py (LogValidatorTest, ProduceRequestTest), test_kafka_list_offsets_tests.py
(ListOffsetsRequestTest, LogSegmentTest, UnifiedLogTest lookups) and test_kafka_log_tests.py (UnifiedLogTest's
rolling and retention).

Every row keeps its source (``file::testMethod @ tag or commit``, like test262 keeps each test's
source) and runs only under the profile of the Kafka version it was read from: 3.5.2 -> kafka-3.5,
3.9.0-rc3 -> kafka-3.6, the 4.x trunk commits -> kafka-4.  A row read unchanged at two tags runs
under both.  Each test checks the reference's own answer against the expectation Kafka's test
asserts, then judges the implementation with ``assert_conforms``.  A row the reference disagrees
with stays, marked ``xfail(strict=True)`` with the reason (a model bug or a documented deviation).

Restating, not copying: only what a Kafka test asserts is expected here.  Mappings used throughout:
LogValidator's ``time`` (or MockTime) is the broker clock ``NOW``; its RecordValidationException
with InvalidTimestampException is the produce error INVALID_TIMESTAMP with one record error per
record; Kafka's "no offset" (``None``/``Optional.empty``) is ListOffsets' -1/-1; the validator's
limits are the topic's configs (3.5: ``difference.max.ms``; 3.6+: ``before``/``after.max.ms``);
ktc models v2 batches only, so a test's down/up-conversion (its ``toMagic``) is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from ktc.reference.types import (
    Batch,
)
from ktc.suites._support import batch

LVT_SCALA = "core/src/test/scala/unit/kafka/log/LogValidatorTest.scala"
LVT_JAVA = "storage/src/test/java/org/apache/kafka/storage/internals/log/LogValidatorTest.java"
PRT = "core/src/test/scala/unit/kafka/server/ProduceRequestTest.scala"
LORT = "core/src/test/scala/unit/kafka/server/ListOffsetsRequestTest.scala"
ULT = "core/src/test/scala/unit/kafka/log/UnifiedLogTest.scala"
LST = "core/src/test/scala/unit/kafka/log/LogSegmentTest.scala"
BOTH_3X = "3.5.2 and 3.9.0-rc3 (same assertions)"
K35, K36, K4 = ("kafka-3.5",), ("kafka-3.6",), ("kafka-4",)


@dataclass(frozen=True)
class Fact:
    id: str
    source: str
    profiles: tuple[str, ...]
    clause: str
    deviation: str | None = None  # set: the reference disagrees, xfail(strict) with this reason


def rows(facts) -> list:
    """One pytest.param per fact: pinned to its profiles, citing its clause, strict xfail if it deviates."""

    def marks(f):
        pinned = [pytest.mark.profiles(*f.profiles), pytest.mark.clause(f.clause)]
        return pinned + ([pytest.mark.xfail(strict=True, reason=f.deviation)] if f.deviation else [])

    return [pytest.param(f, id=f.id, marks=marks(f)) for f in facts]


def slug(method: str) -> str:
    """testInvalidCreateTimeCompressedV2 -> invalid-create-time-compressed-v2."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", re.sub(r"^(test|check)", "", method))
    return words.lower()


def cite(path: str, method: str, tag: str, case: str = "") -> dict:
    name = path.rsplit("/", 1)[-1].split(".")[0]
    short = {
        "LogValidatorTest": "lvt",
        "ProduceRequestTest": "prt",
        "ListOffsetsRequestTest": "lort",
        "UnifiedLogTest": "ult",
        "LogSegmentTest": "lst",
    }[name]
    version = {"3.5.2": "3.5", "3.9.0-rc3": "3.9"}.get(tag.split(" ")[0], "4.x")
    version = "3.x" if tag == BOTH_3X else version
    return {
        "id": "-".join(filter(None, [short, version, slug(method), case])),
        "source": f"{path}::{method}{f'[{case}]' if case else ''} @ {tag}",
    }


def singles(*timestamps: int) -> tuple[Batch, ...]:
    return tuple(batch(ts) for ts in timestamps)
