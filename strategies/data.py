"""Strategies for the data a producer sends: timestamps, records and record batches."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from ktc.reference.types import CODECS, Batch, Record

from . import _batches, _timestamps
from ._edges import INT64_MAX, INT64_MIN
from ._repr import shown
from ._validation import check_bool, check_int64, check_order, check_range, check_sequence, check_strategy, check_subset

__all__ = ["timestamps", "records", "batches"]


def timestamps(
    *,
    now: int | None = None,
    bounds: Sequence[int] = (),
    min_value: int = INT64_MIN,
    max_value: int = INT64_MAX,
    allow_no_timestamp: bool = True,
) -> st.SearchStrategy[int]:
    """Record timestamps: Java ``long`` milliseconds in ``[min_value, max_value]``.

    Named edges are drawn often: 0, 1, -1 (NO_TIMESTAMP, unless ``allow_no_timestamp`` is False,
    which then excludes -1 entirely), -2, INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1,
    ``min_value`` and ``max_value``, and calendar edges (Gregorian cutover, year 1, end of year
    9999, pandas' ns range).  Given the
    broker clock ``now``: now and now ± 1; for every ``b`` in ``bounds`` (a timestamp config
    such as ``message.timestamp.before.max.ms``) the values now - b and now + b and ±1 around
    each, wrapped like Java ``long``; ``now + INT64_MIN`` wrapped (it passes every limit through
    overflow); now read as µs, ns and seconds; then integers within ten days of now.  Any
    integer in the range is possible.  Edges outside ``[min_value, max_value]`` are dropped.

    Examples shrink towards ``now`` when it is given and in range, else towards the value in
    range nearest 0 (0 itself by default), as ``integers()`` does.
    """
    bounds = check_sequence(bounds, "bounds")
    for name, value in (("min_value", min_value), ("max_value", max_value)):
        check_int64(value, name)
    check_order(min_value, "min_value", max_value, "max_value")
    if now is not None:
        check_int64(now, "now")
    for bound in bounds:
        check_range(bound, "each of bounds", 0, INT64_MAX)
    check_bool(allow_no_timestamp, "allow_no_timestamp")
    return _timestamps.timestamps(
        **shown(
            timestamps,
            now=now,
            bounds=bounds,
            min_value=min_value,
            max_value=max_value,
            allow_no_timestamp=allow_no_timestamp,
        )
    )


def records(*, timestamps: st.SearchStrategy[int] | None = None) -> st.SearchStrategy[Record]:
    """Records with a timestamp from ``timestamps`` (default ``timestamps()``), a key that is
    None or up to 8 bytes and a value of up to 16 bytes.

    Shrinks towards ``Record(0)``: timestamp 0, no key, empty value.
    """
    check_strategy(timestamps, "timestamps")
    return _batches.records(**shown(records, timestamps=timestamps))


def batches(
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
) -> st.SearchStrategy[Batch]:
    """v2 record batches of ``min_size`` to ``max_size`` records with timestamps from ``timestamps``.

    Each flag lets a feature be drawn, never forces it: ``log_append_time_attribute`` the
    LogAppendTime attribute bit, ``bad_header`` a header MaxTimestamp that disagrees with the
    records (their min, their max + 1, or any int64), ``control`` / ``transactional`` those
    attribute bits and ``timestamp_extended`` KIP-228's proposed bit.  A flag left False keeps
    the field's default: honest header (None), CreateTime, bits off.

    Shrinks towards one uncompressed CreateTime record with timestamp 0 (the first codec of
    ``codecs`` in CODECS order, "none" when allowed).
    """
    check_strategy(timestamps, "timestamps")
    check_range(min_size, "min_size", 1, 10_000)
    check_range(max_size, "max_size", 1, 10_000)
    check_order(min_size, "min_size", max_size, "max_size")
    codecs = tuple(c for c in CODECS if c in check_subset(codecs, "codecs", CODECS))
    flags = dict(
        log_append_time_attribute=log_append_time_attribute,
        bad_header=bad_header,
        control=control,
        transactional=transactional,
        timestamp_extended=timestamp_extended,
    )
    for name, value in flags.items():
        check_bool(value, name)
    return _batches.batches(
        **shown(batches, timestamps=timestamps, min_size=min_size, max_size=max_size, codecs=codecs, **flags)
    )
