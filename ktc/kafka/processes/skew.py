"""The skewed-clock cluster's clock offsets.  Pure: no Kafka client here, so the suites import the
offsets (``DEFAULT_OFFSETS_S``) without the broker extra."""

from __future__ import annotations

from collections.abc import Sequence

# Seconds.  Outside the stateful suite's +-120 s skews, so only histories written for the cluster match.
DEFAULT_OFFSETS_S = (0, 150, -150)


def offsets_ms(offsets_s: Sequence[float]) -> tuple[int, ...]:
    return tuple(round(o * 1000) for o in offsets_s)


def fastest_then_slowest(offsets: Sequence[float]) -> list[int]:
    """Node indexes ordered so the fastest clock leads first and the slowest one takes over."""
    order = sorted(range(len(offsets)), key=lambda i: offsets[i])
    return [order[-1], order[0], *order[1:-1]]
