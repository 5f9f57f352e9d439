"""Write this folder's reproduce.py (and history.json, the history it replays) with ktc hunt's own generator.

    .venv/bin/python findings/lat-batch-on-createtime-topic/make_reproducer.py      (starts Kafka 4.4.0 once)

The history: a topic created with every config at its default; one Produce of a batch flagged LogAppendTime
whose header MaxTimestamp is now and whose one record is stamped a year ahead; a Fetch of what was stored; a
ListOffsets for that record's own timestamp.  What the finding records at each step is what Kafka 4.4.0
answered (run here); what the KIP answers is ktc's model with Kafka 4's switches (after.max.ms defaults to one
hour, KIP-1030) but every record validated on its own timestamp, as KIP-937 says (``lat_batch_check = never``,
the kip profile's value): the model refuses the batch with INVALID_TIMESTAMP (32).  The op where they first part
is computed (ktc.judge.divergence), not written here.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from ktc.checks.verdicts import Mismatch, Validity, Verdict
from ktc.hunt import script
from ktc.hunt.engine import Finding
from ktc.implementations.families.kafka import KAFKA
from ktc.implementations.kafka.adapter import BrokerAdapter
from ktc.implementations.kafka.settings import Started
from ktc.judge.divergence import first_divergence
from ktc.judge.harness import own_copy
from ktc.judge.serialize import dump_history
from ktc.reference.model import Model
from ktc.reference.types import Batch, CreateTopic, Fetch, History, ListOffsets, Produce, Record, TimestampType
from ktc.specs.profiles import get

HERE = Path(__file__).resolve().parent
FOUND_ON = "4.4.0"
START = 1_700_000_000_000
A_YEAR = 365 * 86_400_000
CLAUSE = "KIP-937.after-bound"

HISTORY = History("kafka-4", (
    CreateTopic("t"),  # every topic config at the broker's default
    Produce("t", Batch((Record(START + A_YEAR, None, b"a year ahead"),),
                       timestamp_type=TimestampType.LOG_APPEND_TIME, max_timestamp=START)),
    Fetch("t"),
    ListOffsets("t", START + A_YEAR),
), START)

KIP_937_ON_KAFKA_4 = script.Model(
    Model(replace(get("kafka-4"), name="kafka-4, records validated on their own timestamps",
                  lat_batch_check=get("kip").lat_batch_check)).run,
    "ktc's model: Kafka 4's defaults (message.timestamp.after.max.ms one hour), each record validated on its own "
    "timestamp as KIP-937 says")


def observed_on(version: str):
    impl = BrokerAdapter(KAFKA, Started(version))
    try:
        return impl.run([own_copy(HISTORY)])[0]
    finally:
        impl.close()


def finding(observed) -> Finding:
    expected = KIP_937_ON_KAFKA_4.run(HISTORY)
    where = first_divergence(HISTORY.ops, expected, observed)
    if where is None:
        sys.exit(f"Kafka {FOUND_ON} answered this history as the KIP does: nothing to reproduce")
    mismatch = Mismatch(where.op_index, f"{where.op_kind} {where.field}", where.expected, where.observed)
    return Finding([Verdict(CLAUSE, Validity.FAIL, 1, mismatch)], HISTORY)


def main() -> int:
    observed = observed_on(FOUND_ON)
    path = script.write(HERE / "reproduce.py", finding(observed), observed, f"Apache Kafka {FOUND_ON}",
                        KIP_937_ON_KAFKA_4)
    (HERE / "history.json").write_text(dump_history(HISTORY) + "\n")
    print(f"wrote {path} and {HERE / 'history.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
