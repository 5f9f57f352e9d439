"""Building blocks of ``timestamps()``: the ordered edge list and the strategy built from it."""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from ._edges import (
    DAY_MS,
    GREGORIAN_CUTOVER_MS,
    INT64_MAX,
    INT64_MIN,
    NO_TIMESTAMP,
    PANDAS_NS_MAX_MS,
    PANDAS_NS_MIN_MS,
    YEAR_1_MS,
    YEAR_9999_END_MS,
    clamp,
    unit_mistakes,
    wrap,
)

NEAR_NOW_MS = 10 * DAY_MS
_GENERIC = (0, 1, NO_TIMESTAMP, -2, INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1)
_CALENDAR = (GREGORIAN_CUTOVER_MS, YEAR_1_MS, YEAR_9999_END_MS, PANDAS_NS_MIN_MS, PANDAS_NS_MAX_MS)


def bound_edges(now: int, bound: int) -> list[int]:
    """The six values around ``now - bound`` and ``now + bound``, wrapped like Java ``long``."""
    return [wrap(now + sign * bound + step) for sign in (-1, 1) for step in (0, -1, 1)]


def now_edges(now: int, bounds: tuple[int, ...]) -> list[int]:
    """Edges that only exist relative to the broker's clock, ``now`` itself first."""
    edges = [now, wrap(now - 1), wrap(now + 1)]
    for bound in bounds:
        edges += bound_edges(now, bound)
    return edges + [wrap(now + INT64_MIN), *unit_mistakes(now)]


def fixed_edges(min_value: int, max_value: int) -> list[int]:
    """Edges that need no clock, and the range's own ends, nearest 0 first (where integers shrink)."""
    return sorted({*_GENERIC, *_CALENDAR, min_value, max_value}, key=lambda e: (abs(e), e < 0))


def edge_list(
    now: int | None, bounds: tuple[int, ...], min_value: int, max_value: int, allow_no_timestamp: bool
) -> list[int]:
    """Every edge in [min_value, max_value], deduplicated, in shrinking-preference order."""
    edges = ([] if now is None else now_edges(now, bounds)) + fixed_edges(min_value, max_value)
    kept = (e for e in edges if min_value <= e <= max_value)
    return list(dict.fromkeys(e for e in kept if allow_no_timestamp or e != NO_TIMESTAMP))


def near_now(now: int | None, min_value: int, max_value: int) -> st.SearchStrategy[int] | None:
    """Integers within ten days of ``now`` and inside the range, or None when there are none."""
    if now is None:
        return None
    low, high = max(min_value, clamp(now - NEAR_NOW_MS)), min(max_value, clamp(now + NEAR_NOW_MS))
    return st.integers(low, high) if low <= high else None


@functools.lru_cache(maxsize=512)
def build(
    now: int | None, bounds: tuple[int, ...], min_value: int, max_value: int, allow_no_timestamp: bool
) -> st.SearchStrategy[int]:
    """Edges first (so examples shrink to the first one), then any integer, then integers near now."""
    edges = edge_list(now, bounds, min_value, max_value, allow_no_timestamp)
    branches = [st.sampled_from(edges)] if edges else []
    branches += [s for s in (st.integers(min_value, max_value), near_now(now, min_value, max_value)) if s is not None]
    strategy = st.one_of(branches)
    return strategy if allow_no_timestamp else strategy.filter(lambda ts: ts != NO_TIMESTAMP)


@st.composite
def timestamps(
    draw: st.DrawFn,
    *,
    now: int | None = None,
    bounds: tuple[int, ...] = (),
    min_value: int = INT64_MIN,
    max_value: int = INT64_MAX,
    allow_no_timestamp: bool = True,
) -> int:
    """Named like the public strategy so that the repr reads as the user's call."""
    return draw(build(now, bounds, min_value, max_value, allow_no_timestamp))
