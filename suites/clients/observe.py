"""What suites/clients observes of a client library, once per library (``ClientImplementation.observed``): the
tests judge each observation under both client profiles, and several clauses read the same one.

An observation is plain data: what the application gave, what the driver answered (the contract's response),
and what the client put on the wire (the capture proxy's decoded Produce requests).  A driver that cannot be
had, or a broker that cannot start here, declines the test as ``unsupported`` with the reason; anything the
library itself does is data for the judgment, never an error of the test.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from ktc.implementations.clients.host import DriverError, from_int64
from ktc.implementations.clients.library import Unavailable
from ktc.judge.declined import unexercised, unsupported

T0 = 1_600_000_000_000  # 2020: inside every default bound of Kafka 4 (before: unbounded; after: one hour)
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
TIMEOUT_MS = 15_000
NO_LIMITS = {"message.timestamp.before.max.ms": 2**63 - 1, "message.timestamp.after.max.ms": 2**63 - 1}


@dataclass(frozen=True)
class Produced:
    given: tuple[int | None, ...]
    answer: dict
    sent: tuple  # capture.Sent, in the order the client sent them
    topic: str

    @property
    def records(self) -> list[int]:
        """The CreateTime of every record the client sent (first timestamp + delta), in order."""
        return [r.create_time for s in self.sent for b in s.batches for r in b.records]

    @property
    def batches(self) -> list:
        return [b for s in self.sent for b in s.batches]

    @property
    def interval(self) -> tuple[int, int]:
        return from_int64(self.answer.get("sent_ms", "0")), from_int64(self.answer.get("acked_ms", "0"))


def client_of(impl):
    """The client library under test, or the test declines: it judges client libraries only."""
    client = impl.implementation
    if not hasattr(client, "library"):
        raise unsupported(f"{impl.name} is not a client library (suites/clients judges those only)")
    return client


def ask(client, op: str, **fields) -> dict:
    try:
        return client.ask(op, timeout_ms=TIMEOUT_MS, **fields)
    except Unavailable as error:
        raise unsupported(f"{client.name} cannot run here: {error}") from None
    except DriverError as error:  # the driver broke the contract: said as a verdict of the test, with its log
        raise AssertionError(f"{client.name}'s driver: {error}") from None


def topic(client, configs: dict, label: str) -> str:
    try:
        return client.new_topic(configs, label)
    except Unavailable as error:
        raise unsupported(f"{client.name} cannot run here: {error}") from None


def record(timestamp: int | None, value: bytes = b"v") -> dict:
    return {
        "key": None,
        "value": base64.b64encode(value).decode(),
        "timestamp": None if timestamp is None else str(timestamp),
        "headers": [],
    }


def produce(client, given: tuple[int | None, ...], codec: str = "none", configs: dict | None = None) -> Produced:
    """The client produces ``given`` as one batch to a fresh topic; what it answered and sent."""
    name = topic(client, configs or {}, f"p-{codec}")
    answer = ask(client, "produce", topic=name, partition="0", compression=codec, records=[record(ts) for ts in given])
    return Produced(given, answer, tuple(client.produced(name)), name)


def produced(impl, given: tuple[int | None, ...], codec: str = "none", configs: dict | None = None) -> Produced:
    client = client_of(impl)
    key = ("produce", given, codec, tuple(sorted((configs or {}).items())))
    return client.observed(key, lambda: produce(client, given, codec, configs))


@dataclass(frozen=True)
class Served:
    """Batches ktc's own client wrote (and read back as stored), and what the library handed the application."""

    stored: tuple  # DecodedBatch, as the broker serves them
    answer: dict
    topic: str

    def read(self) -> dict[int, dict]:
        """offset -> the record the library handed the application."""
        return {int(r["offset"]): r for r in self.answer.get("records", [])}


def serve(client, configs: dict, batches: list, label: str) -> Served:
    """Write ``batches`` (reference.types.Batch) with ktc's wire client; the library consumes them all."""
    name = topic(client, {**NO_LIMITS, **configs}, label)
    with client.admin() as admin:
        for batch in batches:
            out = admin.produce(name, batch)
            if out.error_code:  # the broker's doing, not the client's: nothing of the client is judged
                raise unexercised(f"the broker refused a batch ktc wrote: {out.error_code} {out.error_message}")
        stored = admin.fetch_all(name).batches
    count = sum(len(b.records) for b in stored)
    answer = ask(client, "consume", topic=name, partition="0", offset="0", count=count)
    return Served(tuple(stored), answer, name)


def served(impl, configs: dict, batches: list, label: str) -> Served:
    client = client_of(impl)
    key = ("serve", label, tuple(sorted(configs.items())), tuple(batches))
    return client.observed(key, lambda: serve(client, configs, batches, label))
