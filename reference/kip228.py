"""KIP-228's compatibility tables, executable.

The KIP (Long.MIN_VALUE draft) describes what a broker records and what a consumer reads, for old
and new software, given a record timestamp and the proposed ``isTimestampExtended`` bit.  Each
function returns the *set* of outcomes the table allows: cells that say "Error or ..." allow
both.  The broker side for a "new broker" is the Model under the ``kip`` profile with sentinel
Long.MIN_VALUE; the consumer side has no broker involved and lives only here.
"""

from __future__ import annotations

from typing import Union

from .types import INT64_MIN, NO_TIMESTAMP

Cell = Union[str, tuple[str, int]]  # ERROR, or (what the timestamp is read as, its value)

ERROR = "error"
OLD_SENTINEL = ("no-timestamp", NO_TIMESTAMP)
NEW_SENTINEL = ("no-timestamp", INT64_MIN)


def recorded(ts: int) -> tuple[str, int]:
    return ("timestamp", ts)


def interpret(ts: int, extended: bool, new: bool) -> frozenset[Cell]:
    """One cell of either table: what old or new software makes of (timestamp, isTimestampExtended).

    Both tables are this one mapping, seen from the broker (what it records) and from the
    consumer (what it reads).  Old software ignores the bit, except that the KIP allows it to
    fail on the two extended sentinel-like values ("(error) Error or ...").
    """
    if not new:
        if extended and ts in (NO_TIMESTAMP, INT64_MIN):
            return frozenset({ERROR, OLD_SENTINEL})
        return frozenset({OLD_SENTINEL if ts == NO_TIMESTAMP else recorded(ts)})
    if ts == INT64_MIN or (ts == NO_TIMESTAMP and not extended):
        return frozenset({NEW_SENTINEL})
    return frozenset({recorded(ts)})


def broker_records(sent: int, extended: bool, broker: str) -> frozenset[Cell]:
    """What a broker ('old' or 'new') records for a produced timestamp (producer table)."""
    return interpret(sent, extended, broker == "new")


def consumer_reads(ts: int, extended: bool, consumer: str) -> frozenset[Cell]:
    """How a consumer ('old' or 'new') interprets a stored timestamp (consumer table)."""
    return interpret(ts, extended, consumer == "new")


def stored_as(ts: int, sentinel: int) -> tuple[str, int]:
    """Read a stored timestamp as a table cell, given the sentinel the broker used."""
    return ("no-timestamp", ts) if ts == sentinel else recorded(ts)
