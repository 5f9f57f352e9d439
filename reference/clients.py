"""What the KIPs ask of a client library, executable: the model suites/clients judges real clients against.

A producer's side is judged on the bytes it sent (each record's first timestamp + delta, the batch header's
MaxTimestamp and attributes), a consumer's on what it hands the application.  Each function is the model's
answer for one observation; the profile's switches (never its name) say where the KIP texts and what clients
ship differ: ``negative_timestamps`` ("accepted": KIP-228's "client should be able to publish record with a
negative timestamp"; otherwise a client may refuse one locally, as the Java producer does).
"""

from __future__ import annotations

from collections.abc import Sequence

from ktc.specs.profiles import Profile

from . import kip228
from .types import NO_TIMESTAMP

SENT, REFUSED, NOW, CHANGED = "sent", "refused locally", "replaced by the client's clock", "sent changed"
CREATE_TIME, LOG_APPEND_TIME, NO_TYPE = "CreateTime", "LogAppendTime", "NoTimestampType"


def sent_timestamp_allowed(given: int | None, sent: int, interval: tuple[int, int]) -> bool:
    """A record's sent CreateTime: the application's, or (given none) the client's clock within the interval."""
    if given is None:
        return interval[0] <= sent <= interval[1]
    return sent == given


def header_max(timestamps: Sequence[int]) -> int:
    """The MaxTimestamp a batch of these record timestamps carries (what the broker itself sets)."""
    return max(timestamps)


def what_became_of(given: int, refused: bool, sent: int | None, interval: tuple[int, int]) -> str:
    """What a producer did with a timestamp the application gave: sent as given, refused locally, replaced by
    its clock (a value inside the call's interval), or sent changed."""
    if refused:
        return REFUSED
    if sent == given:
        return SENT
    if sent is not None and interval[0] <= sent <= interval[1]:
        return NOW
    return CHANGED


def allowed_for(given: int, profile: Profile) -> frozenset[str]:
    """What a producer may do with an application's timestamp that is negative or extreme.  Under the KIP texts
    (negative timestamps accepted) it sends it; as clients ship, it may also refuse it locally, and take -1
    (NO_TIMESTAMP) as 'no timestamp' and use its clock."""
    if profile.negative_timestamps == "accepted":
        return frozenset({SENT})
    return frozenset({SENT, REFUSED, NOW} if given == NO_TIMESTAMP else {SENT, REFUSED})


def consumer_expects(batch_type: str, max_timestamp: int, create_time: int) -> tuple[int, frozenset[str | None]]:
    """The timestamp and the types a consumer may hand the application for one record of a served batch: a
    LogAppendTime batch's records all read its MaxTimestamp; a CreateTime record reads first timestamp + delta.
    ``None`` is a library that exposes no type."""
    if batch_type == LOG_APPEND_TIME:
        return max_timestamp, frozenset({LOG_APPEND_TIME, None})
    return create_time, frozenset({CREATE_TIME, None})


def consumer_reading(timestamp: int, timestamp_type: str | None) -> kip228.Cell:
    """What a consumer's answer means in KIP-228's consumer table: no timestamp (its type says so, or it is
    -1, which every client ships as NO_TIMESTAMP), else the timestamp it reads."""
    if timestamp_type == NO_TYPE or timestamp == NO_TIMESTAMP:
        return ("no-timestamp", timestamp)
    return kip228.recorded(timestamp)


def consumer_table_allows(stored: int, extended: bool, reading: kip228.Cell) -> bool:
    """Whether a new consumer's reading of a stored (timestamp, isTimestampExtended) is one the table allows
    (a no-timestamp cell by its kind: a client reports its own sentinel)."""
    cells = kip228.interpret(stored, extended, new=True)
    kind = reading[0] if isinstance(reading, tuple) else reading
    return reading in cells or (kind == "no-timestamp" and any(isinstance(c, tuple) and c[0] == kind for c in cells))
