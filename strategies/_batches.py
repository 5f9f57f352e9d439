"""Building blocks of ``records()`` and ``batches()``: header fields drawn from the records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from hypothesis import strategies as st

from ktc.reference.types import CODECS, Batch, Record, TimestampType

from . import _timestamps
from ._edges import INT64_MAX, INT64_MIN, wrap

KEYS = st.none() | st.binary(max_size=8)
VALUES = st.binary(max_size=16)
ATTRIBUTE_TYPES = st.sampled_from([TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])
T = TypeVar("T")


@st.composite
def records(draw: st.DrawFn, *, timestamps: st.SearchStrategy[int] | None = None) -> Record:
    return Record(draw(_timestamps.timestamps() if timestamps is None else timestamps), draw(KEYS), draw(VALUES))


def dishonest_headers(stamps: list[int]) -> st.SearchStrategy[int | None]:
    """None (honest) first, then maxima that disagree: the min, max + 1 (wrapped), any int64."""
    wrong = list(dict.fromkeys([min(stamps), wrap(max(stamps) + 1)]))
    return st.one_of(st.none(), st.sampled_from(wrong), st.integers(INT64_MIN, INT64_MAX))


def maybe(allowed: bool, strategy: st.SearchStrategy[T], default: T) -> st.SearchStrategy[T]:
    """``strategy`` when the feature is allowed, else the field's default."""
    return strategy if allowed else st.just(default)


@st.composite
def batches(
    draw: st.DrawFn,
    *,
    timestamps: st.SearchStrategy[int] | None = None,
    min_size: int = 1,
    max_size: int = 8,
    codecs: Sequence[str] = CODECS,
    log_append_time_attribute: bool = False,
    bad_header: bool = False,
    control: bool = False,
    transactional: bool = False,
    timestamp_extended: bool = False,
) -> Batch:
    """Named like the public strategy so that the repr reads as the user's call."""
    rows = tuple(draw(st.lists(records(timestamps=timestamps), min_size=min_size, max_size=max_size)))
    header = maybe(bad_header, dishonest_headers([r.timestamp for r in rows]), None)
    return Batch(
        records=rows,
        codec=draw(st.sampled_from(codecs)),
        timestamp_type=draw(maybe(log_append_time_attribute, ATTRIBUTE_TYPES, TimestampType.CREATE_TIME)),
        max_timestamp=draw(header),
        transactional=draw(maybe(transactional, st.booleans(), False)),
        control=draw(maybe(control, st.booleans(), False)),
        timestamp_extended=draw(maybe(timestamp_extended, st.booleans(), False)),
    )
