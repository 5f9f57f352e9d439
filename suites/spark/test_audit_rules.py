"""The audit's checks on generated topic data with planted violations, no broker needed.

One seeded topic per test (the seed is printed): clean CreateTime and LogAppendTime batches, and
planted rows each check must report -- including what no real broker lets ktc plant (a batch header
MaxTimestamp that disagrees with its records, a negative timestamp in a batch the broker would have
rebuilt) and wrong ListOffsets answers from a stand-in broker.  The audit runs in one Spark session,
a few jobs per topic (never one per example); the expected offsets are the planted ones.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

pytest.importorskip("pyspark", reason="ktc audit needs the [spark] extra (pip install -e '.[spark]')")

import pyarrow as pa  # noqa: E402

from ktc.audit import audit  # noqa: E402
from ktc.audit.facts import facts_from_configs  # noqa: E402
from ktc.audit.sources import BATCH_SCHEMA  # noqa: E402
from ktc.spark import session  # noqa: E402

pytestmark = pytest.mark.xdist_group("spark")
READ_MS, HOUR, AFTER = 1_800_000_000_000, 3_600_000, 3_600_000
CONFIGS = {
    "message.timestamp.type": "CreateTime",
    "message.timestamp.after.max.ms": str(AFTER),
    "compression.type": "zstd",
}


class Topic:
    """Generated batches per partition; ``planted[check]`` holds the (partition, offset) each must report."""

    def __init__(self, seed: int, partitions: int = 3, batches: int = 60):
        self.rng = random.Random(seed)
        self.columns = {name: [] for name in BATCH_SCHEMA.names}
        self.planted: dict[str, set] = defaultdict(set)
        for p in range(partitions):
            self.partition(p, batches)

    def partition(self, p: int, batches: int) -> None:
        offset, clock, highest = 0, READ_MS - 50 * HOUR, None  # highest: the largest LogAppendTime so far
        for _ in range(batches):
            kind = self.rng.choice(["clean"] * 6 + ["future", "max", "rebuild", "lat", "backwards"])
            kind = "lat" if kind == "backwards" and highest is None else kind  # backwards needs an earlier one
            clock += self.rng.randint(0, 60_000)
            lat = clock if kind != "backwards" else highest - self.rng.randint(1, HOUR)
            highest = clock if kind == "lat" else highest
            offset += self.batch(p, offset, kind, lat)

    def batch(self, p: int, base: int, kind: str, lat: int) -> int:
        stamps = [READ_MS - self.rng.randint(0, 100 * HOUR) for _ in range(self.rng.randint(1, 6))]
        if kind == "future":
            stamps[-1] = READ_MS + AFTER + 1 + self.rng.choice([0, 1, HOUR])
            self.planted["create-time-within-after-bound"].add((p, base + len(stamps) - 1))
        if kind == "rebuild":
            stamps[0] = -self.rng.randint(2, HOUR)
            self.planted["negative-timestamp-not-rebuilt"].add((p, base))
        if kind in ("lat", "backwards"):
            stamps = [lat] * len(stamps)
            self.planted["timestamp-type-matches-config"] |= {(p, base + i) for i in range(len(stamps))}
            if kind == "backwards":
                self.planted["log-append-time-never-backwards"] |= {(p, base + i) for i in range(len(stamps))}
        header = max(-1, *stamps) + (1 if kind == "max" else 0)
        if kind == "max":
            self.planted["batch-max-matches-records"].add((p, base))
        self.add(p, base, stamps, header, kind)
        return len(stamps)

    def add(self, p: int, base: int, stamps: list[int], header: int, kind: str) -> None:
        lat = kind in ("lat", "backwards")
        codec = "lz4" if kind == "rebuild" else "zstd"
        for i, t in enumerate(stamps):
            for name, value in (
                ("partition", p),
                ("offset", base + i),
                ("timestamp_ms", t),
                ("timestampType", int(lat)),
                ("batch_offset", base),
                ("batch_max_ms", header),
                ("leader_epoch", 0),
                ("control", False),
                ("codec", codec),
            ):
                self.columns[name].append(value)

    def table(self) -> pa.Table:
        return pa.table(self.columns, schema=BATCH_SCHEMA)


class StandIn:
    """A broker answering ListOffsets from the generated records, wrong on purpose for some targets."""

    def __init__(self, topic: Topic, seed: int):
        c = topic.columns
        self.log = defaultdict(list)
        for p, o, t in zip(c["partition"], c["offset"], c["timestamp_ms"]):
            self.log[p].append((o, t))
        self.rng, self.lies, self.late, self.calls = random.Random(seed), 0, 0, 0

    def truth(self, p: int, target: int) -> tuple[int, int, int]:
        hits = [(o, t) for o, t in self.log[p] if t >= target]
        return (0, hits[0][1], hits[0][0]) if hits else (0, -1, -1)

    def __call__(self, p: int, target: int) -> tuple[int, int, int]:
        error, stamp, offset = self.truth(p, target)
        self.calls += 1
        roll = self.rng.random()
        if roll < 0.15:
            self.lies += 1
            return error, stamp, offset + 1 if offset >= 0 else 0
        if roll < 0.2:
            self.late += 1
            return error, target, self.log[p][-1][0] + 1
        return error, stamp, offset


@pytest.fixture(scope="module")
def seed(pytestconfig) -> int:
    value = int(pytestconfig.getoption("hypothesis_seed") or 20261125)
    print(f"\naudit rules seed {value}; replay: pytest {__file__} --hypothesis-seed={value}")
    return value


def audited(topic: Topic, answer=None, **configs):
    facts = facts_from_configs("t", {**CONFIGS, **configs}, "kafka-4", read_ms=READ_MS)
    return audit(session.get().createDataFrame(topic.table()), facts, answer=answer, samples=16, seed=1)


def reported(result) -> dict[str, set]:
    out = defaultdict(set)
    for r in result.violations.select("check", "partition", "offset").collect():
        out[r["check"]].add((r["partition"], r["offset"]))
    return out


def test_every_planted_violation_is_reported_and_nothing_else(seed):
    topic = Topic(seed)
    found = reported(audited(topic))
    checks = {c: found[c] for c in found if c not in ("no-timestamp-records", "negative-timestamps")}
    assert checks == dict(topic.planted), {c: (found[c] ^ topic.planted[c]) for c in set(found) | set(topic.planted)}


def test_a_batch_whose_header_max_disagrees_with_its_records_is_counted_once_as_a_batch(seed):
    topic = Topic(seed)
    row = {r.check: r for r in audited(topic).rows}["batch-max-matches-records"]
    planted = topic.planted["batch-max-matches-records"]
    assert (row.verdict, row.unit, row.violating) == ("fail", "batches", len(planted))


def test_each_wrong_list_offsets_answer_is_a_failure_and_each_answer_past_the_read_is_unknown(seed):
    topic = Topic(seed)
    broker = StandIn(topic, seed)
    row = {r.check: r for r in audited(topic, broker).rows}["list-offsets-by-timestamp"]
    assert (row.violating, row.checked + broker.late) == (broker.lies, broker.calls)
    assert row.verdict == ("fail" if broker.lies else "pass")
    assert (str(broker.late) in row.reason) if broker.late else not row.reason


def test_a_clean_topic_has_no_violation(seed):
    """Records at the bounds' edges (now - 1 h, now, now + after exactly) break nothing."""
    clean = Topic(seed + 1, batches=0)
    for p in range(2):
        clean.add(p, 0, [READ_MS - HOUR, READ_MS, READ_MS + AFTER], READ_MS + AFTER, "clean")
    result = audited(clean, StandIn(clean, 0).truth)
    assert all(r.violating in (0, None) for r in result.rows), [(r.check, r.violating) for r in result.rows]
    assert {r.check: r.verdict for r in result.rows}["list-offsets-by-timestamp"] == "pass"
