"""Planted faults for the real-time tier, as FaultProxy rewrites (faultproxy.py: ``rewrite``) of ListOffsets v5.

The tier reads every log start offset with ListOffsets v5 (implementations/kafka/realtime/session.py), whose
request and response have no flexible fields, so an answer's offset is rewritten in place:

- ``early``: EARLIEST answers one past the broker's log start -- the next segment's base where a segment holds
  one record, as the first segments of the tier's histories do: a log start that jumps early (safety);
- ``hidden``: EARLIEST answers 0 whatever the broker deleted: retention that never acts (liveness).
"""

from __future__ import annotations

import struct

LIST_OFFSETS, VERSION, EARLIEST = 2, 5, -2


def string(frame: bytes, at: int) -> tuple[str, int]:
    (size,) = struct.unpack_from(">h", frame, at)
    return frame[at + 2 : at + 2 + max(size, 0)].decode(), at + 2 + max(size, 0)


def targets(request: bytes) -> dict[tuple[str, int], int] | None:
    """(topic, partition) -> target of a ListOffsets v5 request frame, or None for any other request."""
    api_key, version = struct.unpack_from(">hh", request, 4)
    if (api_key, version) != (LIST_OFFSETS, VERSION):
        return None
    _client, at = string(request, 12)
    at += 5  # replica_id, isolation_level
    out: dict[tuple[str, int], int] = {}
    (topics,) = struct.unpack_from(">i", request, at)
    at += 4
    for _ in range(topics):
        name, at = string(request, at)
        (partitions,) = struct.unpack_from(">i", request, at)
        at += 4
        for _ in range(partitions):
            partition, _epoch, target = struct.unpack_from(">iiq", request, at)
            out[(name, partition)] = target
            at += 16
    return out


def rewriting(change):
    """A FaultProxy rule: every EARLIEST answer's offset (error NONE) passed through ``change``."""

    def rule(request: bytes, response: bytes) -> bytes:
        asked = targets(request)
        if not asked:
            return response
        out, at = bytearray(response), 12  # size, correlation id, throttle_time_ms
        (topics,) = struct.unpack_from(">i", out, at)
        at += 4
        for _ in range(topics):
            name, at = string(bytes(out), at)
            (partitions,) = struct.unpack_from(">i", out, at)
            at += 4
            for _ in range(partitions):
                partition, error, _ts, offset = struct.unpack_from(">ihqq", out, at)
                if error == 0 and asked.get((name, partition)) == EARLIEST:
                    struct.pack_into(">q", out, at + 14, change(offset))
                at += 26
        return bytes(out)

    return rule


EARLY = rewriting(lambda offset: offset + 1)
HIDDEN = rewriting(lambda offset: 0)
