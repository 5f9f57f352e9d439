"""Building blocks of ``histories()`` and ``append_histories()``: one drawer per kind of op."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar, Union

from hypothesis import strategies as st

from ktc.reference.types import (
    INT64_MAX,
    INT64_MIN,
    LIST_OFFSETS_MAX_VERSION,
    NO_TIMESTAMP,
    ONE_HOUR_MS,
    Advance,
    Batch,
    CreateTopic,
    DescribeLog,
    ElectLeader,
    Fetch,
    History,
    ListOffsets,
    Op,
    Produce,
    Record,
    RetentionPass,
    StepClock,
    TopicConfig,
)
from ktc.specs import profiles

from . import configs, data
from ._edges import DAY_MS
from ._sketch import WEEK_MS, Sketch, config_bounds

START_MS = 1_700_000_000_000
ROUND_STARTS = (START_MS, 1_600_000_000_000, 1_800_000_000_000, 2_000_000_000_000)
STARTS = st.one_of(st.sampled_from(ROUND_STARTS), st.integers(START_MS - 365 * DAY_MS, START_MS + 365 * DAY_MS))
ADVANCES = st.one_of(st.sampled_from((1, ONE_HOUR_MS, DAY_MS, 2 * DAY_MS)), st.integers(1, 2 * DAY_MS))
SPECIAL_TARGETS = (-1, -2, -3, -4, -5, -6)  # latest, earliest, max timestamp, earliest local, latest tiered,
# earliest pending upload (v11, KIP-1023)
OTHER_NEGATIVE_TARGETS = (-7, -100, INT64_MIN)  # no special meaning
T = TypeVar("T")
# What a history's Produce batches come from: a strategy, or a callable given timestamps= (see histories())
BatchesArg = Union[None, st.SearchStrategy[Batch], Callable[..., st.SearchStrategy[Batch]]]
Drawer = Callable[[st.DrawFn, Sketch, BatchesArg, int], Union[Op, list[Op]]]  # one kind of op, drawn


def sentinels(profile: str) -> st.SearchStrategy[int]:
    """-1, or KIP-228's Long.MIN draft too when the profile leaves the sentinel to the history."""
    if profiles.get(profile).sentinel == "parameter":
        return st.sampled_from((NO_TIMESTAMP, INT64_MIN))
    return st.just(NO_TIMESTAMP)


def batch_strategy(
    batches: BatchesArg, now: int, bounds: tuple[int, ...], missing: int = NO_TIMESTAMP
) -> st.SearchStrategy[Batch]:
    """A strategy used as given; a callable called with timestamps near ``now`` and ``bounds``, and the
    history's own missing-timestamp sentinel (``missing``) as one record in ten or so."""
    if isinstance(batches, st.SearchStrategy):
        return batches
    make = data.batches if batches is None else batches
    stamps = data.timestamps(now=now, bounds=bounds)
    return make(timestamps=st.one_of(*[stamps] * 9, st.just(missing)))


def where(draw: st.DrawFn, sketch: Sketch, stray: bool = False) -> tuple[str, int]:
    """A topic and one of its partitions; with ``stray``, about one time in eight one that does not
    exist: one of the three just past its last (shrinking to the first of them) or -1 (a read of it
    answers UNKNOWN_TOPIC_OR_PARTITION, -1s)."""
    topic = draw(st.sampled_from(list(sketch.topics)))
    count = sketch.partitions(topic)
    existing = st.integers(0, count - 1)
    return topic, draw(st.one_of(*[existing] * 7, st.integers(count, count + 2) | st.just(-1)) if stray else existing)


def produce(draw: st.DrawFn, sketch: Sketch, batches: BatchesArg, skew_ms: int) -> Produce:
    topic, partition = where(draw, sketch)
    batch = draw(batch_strategy(batches, sketch.clock(topic, partition), sketch.bounds(topic), sketch.no_timestamp))
    sketch.produced += [r.timestamp for r in batch.records if r.timestamp >= 0]
    return Produce(topic, batch, partition)


def advance(draw: st.DrawFn, sketch: Sketch, batches: BatchesArg, skew_ms: int) -> Advance:
    op = Advance(draw(ADVANCES))
    sketch.real_ms += op.ms
    return op


def step_clock(draw: st.DrawFn, sketch: Sketch, batches: BatchesArg, skew_ms: int) -> StepClock:
    op = StepClock(draw(st.integers(0, sketch.brokers - 1)), draw(st.integers(-skew_ms, skew_ms)))
    sketch.offsets[op.broker] += op.delta_ms
    return op


def elect_leader(draw: st.DrawFn, sketch: Sketch, batches: BatchesArg, skew_ms: int) -> ElectLeader:
    topic, partition = where(draw, sketch)
    op = ElectLeader(topic, draw(st.integers(0, sketch.brokers - 1)), partition)
    sketch.leaders[(topic, partition)] = op.broker
    return op


def retention_pass(draw: st.DrawFn, sketch: Sketch, batches: BatchesArg, skew_ms: int) -> list[Op]:
    """A retention pass; half the time a record stamped now goes first and the clock then moves just past the
    topic's retention.ms, so that the pass deletes and the log start moves; half the time reads follow it."""
    deletes = draw(st.booleans())
    topic, partition = where(draw, sketch, stray=not deletes)
    past = past_retention(sketch, topic)
    ops: list[Op] = []
    if deletes and past is not None:
        ops = [Produce(topic, Batch((Record(sketch.clock(topic, partition)),)), partition), Advance(past)]
        sketch.real_ms += past
    ops.append(RetentionPass(topic, partition))
    return ops + (read_burst(draw, sketch, topic, partition) if draw(st.booleans()) else [])


def past_retention(sketch: Sketch, topic: str) -> int | None:
    """One ms past the topic's retention.ms (Kafka's week when unset); None when it keeps everything."""
    retention = sketch.topics[topic].retention_ms
    return WEEK_MS + 1 if retention is None else None if retention < 0 else retention + 1


def read_burst(draw: st.DrawFn, sketch: Sketch, topic: str, partition: int) -> list[Op]:
    """What a consumer reads of one partition at one log state: a Fetch, EARLIEST, LATEST, MAX_TIMESTAMP and a
    lookup near a produced timestamp (the invariants over reads pair them, ktc/checks/reads.py)."""
    near = draw(near_produced(sketch))
    return [Fetch(topic, partition), *(ListOffsets(topic, target, partition) for target in (-2, -1, -3, near))]


def near_produced(sketch: Sketch) -> st.SearchStrategy[int]:
    """A produced timestamp, or one ms either side of it, within [0, INT64_MAX]: a ListOffsets target is an int64
    on the wire, so INT64_MAX + 1 is no request anyone can send (and it overflows Spark's LongType)."""
    return st.sampled_from(sketch.produced or [0]).flatmap(
        lambda t: st.sampled_from((t, min(t + 1, INT64_MAX), max(0, t - 1)))
    )


def reads(draw: st.DrawFn, sketch: Sketch, batches: BatchesArg, skew_ms: int) -> list[Op]:
    return read_burst(draw, sketch, *where(draw, sketch))


def list_offsets(draw: st.DrawFn, sketch: Sketch, batches: BatchesArg, skew_ms: int) -> ListOffsets:
    topic, partition = where(draw, sketch, stray=True)
    target = draw(
        st.one_of(
            st.sampled_from(SPECIAL_TARGETS + OTHER_NEGATIVE_TARGETS), near_produced(sketch), st.integers(0, INT64_MAX)
        )
    )
    newest = min(sketch.profile.list_offsets_max_version, LIST_OFFSETS_MAX_VERSION)
    version = draw(st.one_of(st.none(), st.integers(1, newest)))  # None: the newest both sides speak
    return ListOffsets(topic, target, partition, version, draw(st.booleans()))


def drawers(brokers: int, skew_ms: int) -> list[Drawer]:
    """Produce twice as likely as the rest; clock steps and elections only where they can matter; a burst of
    reads mid-history (a Fetch and ListOffsets of one log state)."""
    kinds: list[Drawer] = [produce, produce, advance, retention_pass, list_offsets, reads]
    return kinds + [step_clock] * (skew_ms > 0) + [elect_leader] * (brokers > 1)


def final_reads(sketch: Sketch) -> list[Op]:
    """Fetch and DescribeLog for every partition of every topic, in creation order."""
    return [
        op(topic, p) for topic in sketch.topics for p in range(sketch.partitions(topic)) for op in (Fetch, DescribeLog)
    ]


def create_topics(draw: st.DrawFn, sketch: Sketch, configs: st.SearchStrategy[TopicConfig]) -> list[CreateTopic]:
    names = ["t", "u"] if draw(st.booleans()) else ["t"]
    for name in names:
        sketch.topics[name] = draw(configs)
    return [CreateTopic(name, sketch.topics[name]) for name in names]


@st.composite
def histories(
    draw: st.DrawFn,
    *,
    profile: str,
    brokers: int = 1,
    max_ops: int = 12,
    topic_configs: st.SearchStrategy[TopicConfig] | None = None,
    batches: BatchesArg = None,
    skew_ms: int = 0,
) -> History:
    """Named like the public strategy so that the repr reads as the user's call."""
    start, no_timestamp = draw(STARTS), draw(sentinels(profile))
    offsets = [0] + [draw(st.integers(-skew_ms, skew_ms)) for _ in range(brokers - 1)]
    sketch = Sketch(profiles.get(profile), start, list(offsets), no_timestamp=no_timestamp)
    chosen = configs.topic_configs(profile=profile) if topic_configs is None else topic_configs
    ops: list[Op] = [*create_topics(draw, sketch, chosen)]
    kinds = drawers(brokers, skew_ms)
    for _ in range(draw(st.integers(0, max_ops))):
        drawn = draw(st.sampled_from(kinds))(draw, sketch, batches, skew_ms)
        ops += drawn if isinstance(drawn, list) else [drawn]
    return History(profile, tuple(ops + final_reads(sketch)), start, tuple(offsets), no_timestamp)


def value_or(given: T | st.SearchStrategy[T] | None, strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """``given`` itself when it is a strategy, ``just(given)`` when a value, ``strategy`` when None."""
    if given is None:
        return strategy
    return given if isinstance(given, st.SearchStrategy) else st.just(given)


@st.composite
def append_histories(
    draw: st.DrawFn,
    *,
    profile: str,
    config: TopicConfig | st.SearchStrategy[TopicConfig] | None = None,
    batch: Batch | st.SearchStrategy[Batch] | None = None,
    now: int | st.SearchStrategy[int] | None = None,
) -> History:
    """Named like the public strategy so that the repr reads as the user's call."""
    start = draw(value_or(now, STARTS))
    chosen = draw(value_or(config, configs.topic_configs(profile=profile)))
    bounds = config_bounds(chosen, profiles.get(profile))
    sent = draw(value_or(batch, data.batches(timestamps=data.timestamps(now=start, bounds=bounds))))
    ops = (CreateTopic("t", chosen), Produce("t", sent), Fetch("t"))
    return History(profile, ops, start, (0,), draw(sentinels(profile)))


@st.composite
def leader_change_histories(
    draw: st.DrawFn,
    *,
    profile: str,
    clock_offsets: Sequence[int],
    max_ops: int = 6,
    topic_configs: st.SearchStrategy[TopicConfig] | None = None,
    batches: BatchesArg = None,
) -> History:
    """Named like the public strategy so that the repr reads as the user's call."""
    start, no_timestamp = draw(STARTS), draw(sentinels(profile))
    offsets = list(draw(st.permutations(clock_offsets)))
    sketch = Sketch(profiles.get(profile), start, offsets, no_timestamp=no_timestamp)
    chosen = configs.topic_configs(profile=profile) if topic_configs is None else topic_configs
    sketch.topics["t"] = replace(draw(chosen), partitions=1)
    ops = [CreateTopic("t", sketch.topics["t"]), *around_election(draw, sketch, batches, max_ops)]
    elected = ElectLeader("t", draw(st.integers(1, len(offsets) - 1)), 0)
    sketch.leaders[("t", 0)] = elected.broker
    ops += [elected, *around_election(draw, sketch, batches, max_ops), Fetch("t")]
    return History(profile, tuple(ops), start, tuple(offsets), no_timestamp)


def around_election(draw: st.DrawFn, sketch: Sketch, batches: BatchesArg, max_ops: int) -> list[Op]:
    """Up to ``max_ops`` appends, advances and bursts of reads of partition 0 (no retention, no clock step)."""
    ops: list[Op] = []
    kinds: tuple[Drawer, ...] = (produce, produce, advance, reads)
    for _ in range(draw(st.integers(0, max_ops))):
        drawn = draw(st.sampled_from(kinds))(draw, sketch, batches, 0)
        ops += drawn if isinstance(drawn, list) else [drawn]
    return ops
