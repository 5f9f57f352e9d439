"""A finding already made explains a failure only on a history of its shape (ktc/hunt/known.py): the same clause
failing for another reason, or on a release the finding does not affect, is still new."""

import json
from dataclasses import replace
from pathlib import Path

from ktc.hunt.known import known
from ktc.judge.serialize import load_history
from ktc.reference.types import Produce, TimestampType

ROOT = Path(__file__).resolve().parents[2]
LOOKUP = "KIP-33.list-offsets-first-offset-at-or-after"


def found_on_4_4_0():
    """`ktc hunt --impl kafka-4 --seed 2611263`: a LogAppendTime-flagged zstd batch on a CreateTime topic, header
    max -35435 below its records; ListOffsets by timestamp answers -1 where the records hold one."""
    doc = json.loads((ROOT / "findings/lat-batch-on-createtime-topic/counterexample-lookup.json").read_text())
    return load_history(json.dumps(doc["history"]))


def as_create_time(history):
    return replace(
        history,
        ops=tuple(
            replace(op, batch=replace(op.batch, timestamp_type=TimestampType.CREATE_TIME))
            if isinstance(op, Produce)
            else op
            for op in history.ops
        ),
    )


def test_a_known_finding_explains_its_clauses_on_a_history_of_its_shape_on_the_releases_it_affects():
    history = found_on_4_4_0()
    assert known(LOOKUP, history, "4.4.0").startswith("known: findings/lat-batch-on-createtime-topic")
    assert known(LOOKUP, history, "3.6.2") is not None


def test_the_same_clause_without_the_shape_or_off_its_releases_or_another_clause_is_not_explained():
    history = found_on_4_4_0()
    assert known(LOOKUP, as_create_time(history), "4.4.0") is None
    assert known(LOOKUP, history, "3.5.2") is None
    assert known("KIP-937.before-bound", history, "4.4.0") is None
    assert known(LOOKUP, history, "external 127.0.0.1:9092") is None
