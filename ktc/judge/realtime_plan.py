"""The histories the real-time tier runs on a broker ktc did not start: one topic each, all at once.

Each is a ``History`` whose timestamps are placed around ``now`` (the wall clock when the tier starts), with
``segment.ms`` an hour (rolls come from the records' timestamps, never from waiting) and ``retention.ms``
either ``due`` (a few seconds to two minutes: the segment goes during the run, so safety and liveness are
both judged) or anything its segments are far past.  Every record is accepted on every profile
(``message.timestamp.before/after.max.ms`` at their maximum).  Its trailing ListOffsets are read once its
log start has settled.  ``clauses``: what its log start offset and its reads judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ktc.reference.types import (
    INT64_MAX,
    NO_TIMESTAMP,
    ONE_HOUR_MS,
    Batch,
    CreateTopic,
    History,
    ListOffsets,
    Produce,
    Record,
    TopicConfig,
)

DAY_MS = 24 * ONE_HOUR_MS
SEGMENT_MS = ONE_HOUR_MS
MIN_DUE_MS, MAX_DUE_MS = 2_000, 120_000
ROLLS, LAST, LEVEL = (
    "KIP-32.roll-by-first-timestamp",
    "KIP-32.retention-by-last-timestamp",
    "KIP-32.retention-segment-level",
)
MTIME, PINS = "KIP-32.retention-mtime-fallback", "KIP-32.future-timestamp-pins-retention"
FROZEN, FIRST_SEGMENT = "KIP-32.future-timestamp-breaks-rolling", "KIP-33.list-offsets-first-segment-only"
CLAUSES = (LAST, LEVEL, MTIME, PINS, ROLLS, FROZEN, FIRST_SEGMENT)


@dataclass(frozen=True)
class Planned:
    """One history of the tier, its name and the clauses it judges."""

    name: str
    history: History
    clauses: tuple[str, ...]

    @property
    def reads(self) -> list[ListOffsets]:
        return [op for op in self.history.ops if isinstance(op, ListOffsets)]


def due_ms(interval_ms: int | None, budget_ms: int) -> int:
    """retention.ms of the segments that go during the run: about one check interval (so a pass is likely to
    fall before they are due, where an early deletion shows), within [2 s, 2 min] and a sixth of the budget."""
    wanted = interval_ms if interval_ms is not None else budget_ms // 6
    return max(MIN_DUE_MS, min(MAX_DUE_MS, wanted, budget_ms // 6))


def topic(retention_ms: int) -> CreateTopic:
    return CreateTopic(
        "t",
        TopicConfig(segment_ms=SEGMENT_MS, retention_ms=retention_ms, before_max_ms=INT64_MAX, after_max_ms=INT64_MAX),
    )


def history(profile: str, now: int, retention_ms: int, stamps: list[list[int]], reads: Sequence[int] = ()) -> History:
    produces = [Produce("t", Batch(tuple(Record(ts) for ts in batch))) for batch in stamps]
    return History(profile, (topic(retention_ms), *produces, *(ListOffsets("t", t) for t in reads)), start_ms=now)


def plan(profile: str, now: int, due: int) -> list[Planned]:
    """The tier's histories around ``now`` with ``due`` as the retention.ms of what goes during the run."""
    h, d = SEGMENT_MS, DAY_MS
    return [
        # the first segment's first record is old, its last is now: it goes only once now - last > due
        Planned(
            "by-last-timestamp",
            history(profile, now, due, [[now - h // 2], [now], [now + 2 * h]]),
            (LAST, LEVEL, ROLLS),
        ),
        # old, old, future (kept), older: the pass stops at the future segment and keeps what follows it
        Planned(
            "stops-at-a-survivor",
            history(profile, now, due, [[now - 3 * d], [now - d], [now + d], [now - 2 * d], [now - 3 * d]]),
            (LEVEL, PINS, ROLLS),
        ),
        # a first batch just ahead of now: older batches after it do not roll; one far past it does
        Planned(
            "future-first-batch",
            history(profile, now, due, [[now + due // 2], [now - d], [now - 2 * d], [now + due // 2 + 2 * h]]),
            (FROZEN, ROLLS, LAST, PINS),
        ),
        # no timestamps: the active segment goes by its file's mtime, the broker clock at its last append
        Planned(
            "no-timestamps", history(profile, now, due, [[NO_TIMESTAMP], [NO_TIMESTAMP, NO_TIMESTAMP]]), (MTIME, LEVEL)
        ),
        # several segments, the first two gone at once: time queries answer from the segments left
        Planned(
            "list-offsets-after-retention",
            history(
                profile,
                now,
                due,
                [[now - 3 * d], [now - d], [now + d, now - 2 * d], [now - d // 2], [now + d + 2 * h]],
                reads=[now - 3 * d, now - d // 2, now + d, now + d + 1, now + d + 2 * h, -3],
            ),
            (FIRST_SEGMENT, LEVEL, ROLLS),
        ),
    ]
