"""A Kafka client that can say anything: hand-built v2 record batches over kafka-python's framing.

Request and response *framing* (headers, flexible versions, tagged fields) comes from
kafka-python's protocol classes, which are generated from Kafka's own JSON message schemas
(requests as data: messages.py, admin.py).  The *record batch* is written and read by hand (records.py),
because a conformance suite must send what no well-behaved producer would: any int64 timestamp
(``-1``, ``Long.MIN``, ``Long.MAX``), any attribute bits, a header MaxTimestamp that disagrees with
the records, and must read back the stored batch exactly as the broker keeps it (header max,
timestamp type, each record's delta).  See implementations/kafka/README.md for the full list of
what is hand-written and why.  This module is the facade: everything is importable from here.

Only ``reference.types`` is imported from the reference (plain data), never its rules.
"""

from __future__ import annotations

import select
import struct
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ktc.reference.types import INT64_MAX, INT64_MIN, Batch

from . import admin, messages, routing
from .admin import RESOURCE_BROKER, RESOURCE_TOPIC, ConfigEntry, NewTopic
from .messages import (  # noqa: F401
    API_KEYS,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    LIST_OFFSETS_MAX,
    MAX_TIMESTAMP,
    VERSIONS,
    Call,
    FetchOutcome,
    ListOffsetsOutcome,
    Pause,
    ProduceOutcome,
)
from .records import (  # noqa: F401
    ATTR_CONTROL,
    ATTR_TIMESTAMP_EXTENDED,
    ATTR_TIMESTAMP_TYPE,
    ATTR_TRANSACTIONAL,
    BATCH_HEADER,
    CODEC_IDS,
    CODEC_NAMES,
    CRC_START,
    DecodedBatch,
    UnsupportedVersion,
    WireError,
    crc32c,
    crc32c_pure,
    decode_batches,
    encode_batch,
    read_varint,
    wrap64,
    zigzag_varint,
)
from .security import Security, open_socket


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# ---- the connection ------------------------------------------------------------------------


class Client:
    """One blocking connection to one broker.  Kafka error codes are data, never exceptions."""

    def __init__(
        self, bootstrap: str, *, timeout_s: float = 30.0, client_id: str = "ktc", security: Security | None = None
    ):
        """Connect (TLS and SASL as ``security`` says; default ``Security.from_env()``, i.e. $KTC_KAFKA_CONFIG)."""
        host, _, port = bootstrap.rpartition(":")
        self.address = (host or "127.0.0.1", int(port))
        self.timeout_s = timeout_s
        self.client_id = client_id
        self.security = Security.from_env() if security is None else security
        self._correlation = 0
        self._versions: dict[int, tuple[int, int]] | None = None
        self.peers: dict[tuple[str, int], Client] = {}  # other brokers of its cluster that a Call named (Call.to)
        self.sock = open_socket(self.address, timeout_s, self.security)

    def close(self) -> None:
        for peer in self.peers.values():
            peer.close()
        self.sock.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- framing
    def _recv_exactly(self, n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            chunk = self.sock.recv(n - got)
            if not chunk:
                raise WireError(f"{self.address[0]}:{self.address[1]} closed the connection")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def reopen_if_dropped(self) -> bool:
        """Brokers close idle connections (``connections.max.idle.ms``, 10 minutes by default): before a
        request, a connection the broker already closed (readable while nothing was asked) is replaced."""
        try:
            readable = bool(select.select([self.sock], [], [], 0)[0])
        except (OSError, ValueError):
            readable = True
        if readable:
            self.sock.close()
            self.sock = open_socket(self.address, self.timeout_s, self.security)
        return readable

    def request(self, request_cls, response_cls, version: int, **fields):
        """Send one request (kafka-python message class, given version) and decode its response."""
        self.reopen_if_dropped()
        self._correlation += 1
        request = request_cls[version](**fields)
        request.with_header(correlation_id=self._correlation, client_id=self.client_id)
        try:
            self.sock.sendall(request.encode(header=True, framed=True))
            size = struct.unpack(">i", self._recv_exactly(4))[0]
            data = self._recv_exactly(size)
        except TimeoutError:
            raise WireError(f"no answer from {self.address[0]}:{self.address[1]} within {self.timeout_s} s") from None
        response = response_cls[version].decode(data, header=True)
        if response.header.correlation_id != self._correlation:
            raise WireError(f"correlation id {response.header.correlation_id} != {self._correlation}")
        return response

    def version(self, api: str, wanted: int | None = None) -> int:
        """The version of ``api`` this client speaks (or ``wanted``), after checking the broker supports it."""
        wanted = VERSIONS[api] if wanted is None else wanted
        if api != "ApiVersions":
            supported = self.supported_versions().get(API_KEYS[api])
            if supported is None or not supported[0] <= wanted <= supported[1]:
                raise UnsupportedVersion(f"broker does not support {api} v{wanted} (it supports {supported})")
        return wanted

    def call(self, call: Call):
        """Send one Call (to the broker it names, else on this connection) and return its parsed answer."""
        if call.to is not None and call.to != self.address:
            return self.peer(call.to).call(call)
        request_cls, response_cls = messages.MESSAGES[call.api]
        return call.parse(self.request(request_cls, response_cls, self.version(call.api, call.at), **call.fields))

    def peer(self, address: tuple[str, int]) -> Client:
        """A connection of this client's to another broker of the cluster, opened once."""
        if address not in self.peers:
            host, port = address
            self.peers[address] = Client(
                f"{host}:{port}", timeout_s=self.timeout_s, client_id=self.client_id, security=self.security
            )
        return self.peers[address]

    def perform(self, steps):
        """Run a multi-request operation of messages.py or admin.py (a generator of Call / Pause) to its result."""
        answer = None
        try:
            while True:
                step = steps.send(answer)
                if isinstance(step, Pause):
                    time.sleep(step.seconds)
                answer = None if isinstance(step, Pause) else self.call(step)
        except StopIteration as done:
            return done.value

    # -- APIs
    def api_versions(self) -> dict[int, tuple[int, int]]:
        self._versions = self.call(admin.api_versions())
        return dict(self._versions)

    def supported_versions(self) -> dict[int, tuple[int, int]]:
        return self._versions if self._versions is not None else self.api_versions()

    def newest(self, api: str, cap: int) -> int:
        """The newest version of ``api`` the broker supports, at most ``cap``."""
        return min(self.supported_versions().get(API_KEYS[api], (0, cap))[1], cap)

    def create_topic(
        self,
        name: str,
        configs: Mapping[str, object] = {},
        *,
        partitions: int = 1,
        replication_factor: int = 1,
        timeout_ms: int = 30_000,
        wait_s: float = 10.0,
    ) -> tuple[int, str | None]:
        """CreateTopics; on success, wait (up to ``wait_s``) until every partition's leader answers ListOffsets
        (see routing.create_and_wait)."""
        topic = NewTopic(name, dict(configs), partitions, replication_factor)
        return self.perform(routing.create_and_wait([topic], wait_s, timeout_ms))[name]

    def delete_topics(self, names: Iterable[str], timeout_ms: int = 30_000) -> dict[str, int]:
        return self.call(admin.delete_topics(names, timeout_ms))

    def produce_raw(
        self,
        topic: str,
        records: bytes,
        *,
        partition: int = 0,
        acks: int = -1,
        timeout_ms: int = 30_000,
        transactional_id: str | None = None,
    ) -> ProduceOutcome:
        call = messages.produce(
            topic, records, partition=partition, acks=acks, timeout_ms=timeout_ms, transactional_id=transactional_id
        )
        self.version("Produce")
        sent = now_ms()
        out = self.call(call)
        return replace(out, sent_ms=sent, received_ms=now_ms())

    def produce(self, topic: str, batch: Batch, *, partition: int = 0, **batch_options) -> ProduceOutcome:
        return self.produce_raw(topic, encode_batch(batch, **batch_options), partition=partition)

    def fetch(
        self,
        topic: str,
        *,
        partition: int = 0,
        offset: int = 0,
        max_bytes: int = 64 << 20,
        max_wait_ms: int = 0,
        isolation_level: int = 0,
    ) -> FetchOutcome:
        return self.call(
            messages.fetch(
                topic,
                partition=partition,
                offset=offset,
                max_bytes=max_bytes,
                max_wait_ms=max_wait_ms,
                isolation_level=isolation_level,
            )
        )

    def fetch_all(self, topic: str, *, partition: int = 0) -> FetchOutcome:
        """Every batch from the log start to the high watermark (several Fetches if needed)."""
        return self.perform(messages.fetch_all(topic, partition))

    def list_offsets(
        self, topic: str, target: int, *, partition: int = 0, version: int | None = None, isolation_level: int = 0
    ) -> ListOffsetsOutcome:
        call = messages.list_offsets([(topic, partition, target)], isolation_level, version)
        return self.call(call)[(topic, partition)]

    def describe_configs(
        self, resource_type: int, name: str, keys: Sequence[str] | None = None
    ) -> tuple[int, str | None, dict[str, ConfigEntry]]:
        return self.call(admin.describe_configs(resource_type, name, keys))

    def describe_topic_configs(self, topic: str, keys: Iterable[str] | None = None):
        return self.describe_configs(RESOURCE_TOPIC, topic, None if keys is None else list(keys))

    def describe_broker_configs(self, broker_id: int = 1, keys: Iterable[str] | None = None):
        return self.describe_configs(RESOURCE_BROKER, str(broker_id), None if keys is None else list(keys))


__all__ = [
    "Client",
    "WireError",
    "UnsupportedVersion",
    "encode_batch",
    "decode_batches",
    "DecodedBatch",
    "ProduceOutcome",
    "FetchOutcome",
    "ListOffsetsOutcome",
    "ConfigEntry",
    "NewTopic",
    "Call",
    "Pause",
    "crc32c",
    "crc32c_pure",
    "LATEST_TIMESTAMP",
    "EARLIEST_TIMESTAMP",
    "MAX_TIMESTAMP",
    "INT64_MIN",
    "INT64_MAX",
    "now_ms",
]
