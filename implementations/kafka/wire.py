"""A Kafka client that can say anything: hand-built v2 record batches over kafka-python's framing.

Request and response *framing* (headers, flexible versions, tagged fields) comes from
kafka-python's protocol classes, which are generated from Kafka's own JSON message schemas.
The *record batch* is written and read here by hand, because a conformance suite must send what
no well-behaved producer would: any int64 timestamp (``-1``, ``Long.MIN``, ``Long.MAX``), any
attribute bits, a header MaxTimestamp that disagrees with the records, and must read back the
stored batch exactly as the broker keeps it (header max, timestamp type, each record's delta).
See implementations/kafka/README.md for the full list of what is hand-written and why.

Only ``reference.types`` is imported from the reference (plain data), never its rules.
"""
from __future__ import annotations

import socket
import struct
import time
import warnings
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from reference.types import (INT64_MAX, INT64_MIN, NO_TIMESTAMP, Batch, RecordError, StoredBatch, StoredRecord,
                             TimestampType, header_max)

try:  # hardware/C CRC32C when available
    from crc32c import crc32c as _crc32c_fast
except ImportError:  # pragma: no cover - exercised only without the wheel
    _crc32c_fast = None

with warnings.catch_warnings():  # kafka-python's schema loader uses deprecated importlib.resources calls
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse, DescribeConfigsRequest, \
        DescribeConfigsResponse
    from kafka.protocol.consumer import FetchRequest, FetchResponse, ListOffsetsRequest, ListOffsetsResponse
    from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
    from kafka.protocol.producer import ProduceRequest, ProduceResponse

# The versions this client speaks: inside the ranges of both 3.9 and 4.x brokers (4.0 removed
# Produce v0-2, Fetch v0-3, ListOffsets v0, CreateTopics v0-1, DescribeConfigs v0 - KIP-896).
VERSIONS = {
    "ApiVersions": 3,
    "Produce": 8,          # first version with record_errors + error_message (KIP-467)
    "Fetch": 11,           # last non-flexible version that names topics (13+ uses topic ids)
    "ListOffsets": 7,      # MAX_TIMESTAMP (-3) needs v7 (KIP-734)
    "CreateTopics": 5,
    "DescribeConfigs": 4,
}
API_KEYS = {"Produce": 0, "Fetch": 1, "ListOffsets": 2, "ApiVersions": 18, "CreateTopics": 19, "DescribeConfigs": 32}
LATEST_TIMESTAMP, EARLIEST_TIMESTAMP, MAX_TIMESTAMP = -1, -2, -3

CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
CODEC_NAMES = {v: k for k, v in CODEC_IDS.items()}
ATTR_TIMESTAMP_TYPE = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_TIMESTAMP_EXTENDED = 0x80  # KIP-228's proposed bit; no released broker defines it
BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")  # baseOffset .. recordCount: 61 bytes
CRC_START = 21  # attributes start: baseOffset(8) length(4) leaderEpoch(4) magic(1) crc(4)

RESOURCE_TOPIC, RESOURCE_BROKER = 2, 4


class WireError(RuntimeError):
    """A transport or framing problem (not a Kafka error code, which is returned as data)."""


class UnsupportedVersion(WireError):
    pass


# ---- CRC32C (Castagnoli) -------------------------------------------------------------------

def _crc_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def crc32c_pure(data: bytes, crc: int = 0) -> int:
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc32c(data: bytes) -> int:
    return _crc32c_fast(data) if _crc32c_fast is not None else crc32c_pure(data)


# ---- varints (zigzag, as in DefaultRecord) ---------------------------------------------------

def wrap64(value: int) -> int:
    """Java long arithmetic: reduce to [Long.MIN, Long.MAX]."""
    return ((value - INT64_MIN) % 2**64) + INT64_MIN


def zigzag_varint(value: int, bits: int = 64) -> bytes:
    z = ((value << 1) ^ (value >> (bits - 1))) & ((1 << bits) - 1)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def read_varint(data: memoryview, pos: int, bits: int = 64) -> tuple[int, int]:
    z = shift = 0
    while True:
        if shift > bits + 6:
            raise WireError("varint too long")
        byte = data[pos]
        pos += 1
        z |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    z &= (1 << bits) - 1
    return (z >> 1) ^ -(z & 1), pos


# ---- record batches --------------------------------------------------------------------------

def _codec(name: str):
    from kafka import codec  # gzip always works; snappy/lz4/zstd need their optional packages
    return {"gzip": (codec.gzip_encode, codec.gzip_decode),
            "snappy": (codec.snappy_encode, codec.snappy_decode),
            "lz4": (codec.lz4_encode, codec.lz4_decode),
            "zstd": (codec.zstd_encode, codec.zstd_decode)}[name]


def encode_batch(batch: Batch, *, base_offset: int = 0, base_timestamp: Optional[int] = None,
                 attributes: Optional[int] = None, producer_id: int = -1, producer_epoch: int = -1,
                 base_sequence: int = -1, partition_leader_epoch: int = -1, bad_crc: bool = False) -> bytes:
    """One magic-2 RecordBatch, byte for byte what ``batch`` says, honest or not.

    ``base_timestamp`` defaults to the first record's timestamp (as the Java producer writes it);
    each record carries ``timestamp - base`` as a Java-wrapping varlong, so any int64 survives.
    ``attributes`` overrides the whole attribute word; otherwise it is built from the batch's
    codec, timestamp type, transactional / control / KIP-228 bits.
    """
    records = batch.records
    base_ts = (records[0].timestamp if records else NO_TIMESTAMP) if base_timestamp is None else base_timestamp
    body = bytearray()
    for i, r in enumerate(records):
        rec = bytearray(b"\x00")  # record attributes: unused
        rec += zigzag_varint(wrap64(r.timestamp - base_ts))
        rec += zigzag_varint(i, 32)
        if r.key is None:
            rec += zigzag_varint(-1, 32)
        else:
            rec += zigzag_varint(len(r.key), 32) + r.key
        rec += zigzag_varint(len(r.value), 32) + r.value
        rec += zigzag_varint(0, 32)  # headers
        body += zigzag_varint(len(rec), 32) + rec
    if batch.codec != "none":
        body = bytearray(_codec(batch.codec)[0](bytes(body)))
    if attributes is None:
        attributes = CODEC_IDS[batch.codec]
        if batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
            attributes |= ATTR_TIMESTAMP_TYPE
        if batch.transactional:
            attributes |= ATTR_TRANSACTIONAL
        if batch.control:
            attributes |= ATTR_CONTROL
        if batch.timestamp_extended:
            attributes |= ATTR_TIMESTAMP_EXTENDED
    length = BATCH_HEADER.size - 12 + len(body)
    header = bytearray(BATCH_HEADER.pack(base_offset, length, partition_leader_epoch, 2, 0, attributes,
                                         max(len(records) - 1, 0), wrap64(base_ts), wrap64(header_max(batch)),
                                         producer_id, producer_epoch, base_sequence, len(records)))
    out = header + body
    crc = crc32c(bytes(out[CRC_START:]))
    struct.pack_into(">I", out, 17, crc ^ (1 if bad_crc else 0))
    return bytes(out)


@dataclass(frozen=True)
class DecodedBatch:
    """A stored v2 batch as it came back from Fetch, with every header field."""

    base_offset: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    records: tuple[StoredRecord, ...]  # timestamp = what a consumer sees; create_time = base + delta
    crc_ok: bool

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType.LOG_APPEND_TIME if self.attributes & ATTR_TIMESTAMP_TYPE else TimestampType.CREATE_TIME

    @property
    def codec(self) -> str:
        return CODEC_NAMES.get(self.attributes & 0x07, f"unknown({self.attributes & 0x07})")

    def stored(self) -> StoredBatch:
        return StoredBatch(self.base_offset, self.timestamp_type, self.max_timestamp, self.records)


def decode_batches(data: bytes) -> list[DecodedBatch]:
    """Every complete magic-2 batch in a Fetch ``records`` blob (a trailing partial batch is skipped)."""
    view = memoryview(data)
    out: list[DecodedBatch] = []
    pos = 0
    while pos + 12 <= len(view):
        base_offset, length = struct.unpack_from(">qi", view, pos)
        end = pos + 12 + length
        if end > len(view):
            break
        magic = view[pos + 16]
        if magic != 2:
            raise WireError(f"batch at offset {base_offset} has magic {magic}; only v2 is decoded")
        (_, _, _, _, crc, attributes, last_delta, base_ts, max_ts, producer_id, _, _,
         count) = BATCH_HEADER.unpack_from(view, pos)
        crc_ok = crc32c(bytes(view[pos + CRC_START:end])) == crc
        body = view[pos + BATCH_HEADER.size:end]
        codec = attributes & 0x07
        if codec:
            body = memoryview(_codec(CODEC_NAMES[codec])[1](bytes(body)))
        log_append = bool(attributes & ATTR_TIMESTAMP_TYPE)
        records = []
        p = 0
        for _ in range(count):
            size, p = read_varint(body, p, 32)
            rec_end = p + size
            p += 1  # record attributes
            delta, p = read_varint(body, p)
            offset_delta, p = read_varint(body, p, 32)
            p = rec_end
            create = wrap64(base_ts + delta)
            records.append(StoredRecord(base_offset + offset_delta, max_ts if log_append else create, create))
        out.append(DecodedBatch(base_offset, attributes, last_delta, base_ts, max_ts, producer_id,
                                tuple(records), crc_ok))
        pos = end
    return out


# ---- responses as plain data ---------------------------------------------------------------

@dataclass(frozen=True)
class ProduceOutcome:
    error_code: int
    error_message: Optional[str]
    record_errors: tuple[RecordError, ...]
    base_offset: int
    log_append_time: int
    log_start_offset: int
    sent_ms: int       # wall clock just before the request left
    received_ms: int   # wall clock just after the response arrived


@dataclass(frozen=True)
class FetchOutcome:
    error_code: int
    high_watermark: int
    log_start_offset: int
    batches: tuple[DecodedBatch, ...]


@dataclass(frozen=True)
class ListOffsetsOutcome:
    error_code: int
    timestamp: int
    offset: int
    leader_epoch: int


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: Optional[str]
    source: int
    read_only: bool
    synonyms: tuple[tuple[str, Optional[str], int], ...]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# ---- the connection ------------------------------------------------------------------------

class Client:
    """One blocking connection to one broker.  Kafka error codes are data, never exceptions."""

    def __init__(self, bootstrap: str, *, timeout_s: float = 30.0, client_id: str = "ktc"):
        host, _, port = bootstrap.rpartition(":")
        self.address = (host or "127.0.0.1", int(port))
        self.timeout_s = timeout_s
        self.client_id = client_id
        self._correlation = 0
        self._versions: Optional[dict[int, tuple[int, int]]] = None
        try:
            self.sock = socket.create_connection(self.address, timeout=timeout_s)
        except OSError as error:
            raise WireError(f"cannot connect to {bootstrap}: {error}") from None
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Client":
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

    def request(self, request_cls, response_cls, version: int, **fields):
        """Send one request (kafka-python message class, given version) and decode its response."""
        self._correlation += 1
        request = request_cls[version](**fields)
        request.with_header(correlation_id=self._correlation, client_id=self.client_id)
        try:
            self.sock.sendall(request.encode(header=True, framed=True))
            size = struct.unpack(">i", self._recv_exactly(4))[0]
            data = self._recv_exactly(size)
        except socket.timeout:
            raise WireError(f"no answer from {self.address[0]}:{self.address[1]} within {self.timeout_s} s") from None
        response = response_cls[version].decode(data, header=True)
        if response.header.correlation_id != self._correlation:
            raise WireError(f"correlation id {response.header.correlation_id} != {self._correlation}")
        return response

    def _version(self, api: str) -> int:
        wanted = VERSIONS[api]
        if api != "ApiVersions":
            supported = self.supported_versions().get(API_KEYS[api])
            if supported is None or not supported[0] <= wanted <= supported[1]:
                raise UnsupportedVersion(f"broker does not support {api} v{wanted} (it supports {supported})")
        return wanted

    # -- APIs
    def api_versions(self) -> dict[int, tuple[int, int]]:
        response = self.request(ApiVersionsRequest, ApiVersionsResponse, VERSIONS["ApiVersions"],
                                client_software_name="ktc", client_software_version="0")
        if response.error_code:
            raise WireError(f"ApiVersions error {response.error_code}")
        self._versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        return dict(self._versions)

    def supported_versions(self) -> dict[int, tuple[int, int]]:
        return self._versions if self._versions is not None else self.api_versions()

    def create_topic(self, name: str, configs: Mapping[str, object] = (), *, partitions: int = 1,
                     replication_factor: int = 1, timeout_ms: int = 30_000,
                     wait_s: float = 10.0) -> tuple[int, Optional[str]]:
        """CreateTopics; on success, wait (up to ``wait_s``) until every partition answers ListOffsets
        on this connection: CreateTopics returns when the controller has committed the topic, which
        can be before the broker has applied it (a Produce then gets UNKNOWN_TOPIC_OR_PARTITION)."""
        req = CreateTopicsRequest[VERSIONS["CreateTopics"]]
        topic = req.CreatableTopic(
            name=name, num_partitions=partitions, replication_factor=replication_factor, assignments=[],
            configs=[req.CreatableTopic.CreatableTopicConfig(name=k, value=str(v))
                     for k, v in dict(configs).items()])
        response = self.request(CreateTopicsRequest, CreateTopicsResponse, self._version("CreateTopics"),
                                topics=[topic], timeout_ms=timeout_ms, validate_only=False)
        result = response.topics[0]
        if result.error_code == 0 and wait_s > 0:
            deadline = time.monotonic() + wait_s
            for partition in range(partitions):
                while self.list_offsets(name, LATEST_TIMESTAMP, partition=partition).error_code != 0:
                    if time.monotonic() > deadline:
                        raise WireError(f"topic {name!r} partition {partition} not ready {wait_s} s after CreateTopics")
                    time.sleep(0.01)
        return result.error_code, result.error_message

    def produce_raw(self, topic: str, records: bytes, *, partition: int = 0, acks: int = -1,
                    timeout_ms: int = 30_000, transactional_id: Optional[str] = None) -> ProduceOutcome:
        req = ProduceRequest[VERSIONS["Produce"]]
        data = req.TopicProduceData(name=topic, partition_data=[
            req.TopicProduceData.PartitionProduceData(index=partition, records=records)])
        version = self._version("Produce")
        sent = now_ms()
        response = self.request(ProduceRequest, ProduceResponse, version, transactional_id=transactional_id,
                                acks=acks, timeout_ms=timeout_ms, topic_data=[data])
        received = now_ms()
        p = response.responses[0].partition_responses[0]
        return ProduceOutcome(
            error_code=p.error_code, error_message=p.error_message,
            record_errors=tuple(RecordError(e.batch_index, e.batch_index_error_message) for e in p.record_errors),
            base_offset=p.base_offset, log_append_time=p.log_append_time_ms, log_start_offset=p.log_start_offset,
            sent_ms=sent, received_ms=received)

    def produce(self, topic: str, batch: Batch, *, partition: int = 0, **batch_options) -> ProduceOutcome:
        return self.produce_raw(topic, encode_batch(batch, **batch_options), partition=partition)

    def fetch(self, topic: str, *, partition: int = 0, offset: int = 0, max_bytes: int = 64 << 20,
              max_wait_ms: int = 0, isolation_level: int = 0) -> FetchOutcome:
        req = FetchRequest[VERSIONS["Fetch"]]
        part = req.FetchTopic.FetchPartition(partition=partition, current_leader_epoch=-1, fetch_offset=offset,
                                             log_start_offset=-1, partition_max_bytes=max_bytes)
        response = self.request(FetchRequest, FetchResponse, self._version("Fetch"), replica_id=-1,
                                max_wait_ms=max_wait_ms, min_bytes=0, max_bytes=max_bytes,
                                isolation_level=isolation_level, session_id=0, session_epoch=-1,
                                topics=[req.FetchTopic(topic=topic, partitions=[part])],
                                forgotten_topics_data=[], rack_id="")
        if response.error_code:
            return FetchOutcome(response.error_code, -1, -1, ())
        p = response.responses[0].partitions[0]
        return FetchOutcome(p.error_code, p.high_watermark, p.log_start_offset,
                            tuple(decode_batches(bytes(p.records or b""))))

    def fetch_all(self, topic: str, *, partition: int = 0) -> FetchOutcome:
        """Every batch from the log start to the high watermark (several Fetches if needed)."""
        first = self.fetch(topic, partition=partition, offset=0)
        if first.error_code:
            return first
        batches = list(first.batches)
        offset = (batches[-1].base_offset + batches[-1].last_offset_delta + 1) if batches else first.high_watermark
        while batches and offset < first.high_watermark:
            more = self.fetch(topic, partition=partition, offset=offset)
            if more.error_code or not more.batches:
                break
            batches += more.batches
            offset = more.batches[-1].base_offset + more.batches[-1].last_offset_delta + 1
        return FetchOutcome(first.error_code, first.high_watermark, first.log_start_offset, tuple(batches))

    def list_offsets(self, topic: str, target: int, *, partition: int = 0,
                     isolation_level: int = 0) -> ListOffsetsOutcome:
        req = ListOffsetsRequest[VERSIONS["ListOffsets"]]
        part = req.ListOffsetsTopic.ListOffsetsPartition(partition_index=partition, current_leader_epoch=-1,
                                                         timestamp=target)
        response = self.request(ListOffsetsRequest, ListOffsetsResponse, self._version("ListOffsets"),
                                replica_id=-1, isolation_level=isolation_level,
                                topics=[req.ListOffsetsTopic(name=topic, partitions=[part])])
        p = response.topics[0].partitions[0]
        return ListOffsetsOutcome(p.error_code, p.timestamp, p.offset, p.leader_epoch)

    def describe_configs(self, resource_type: int, name: str, keys: Optional[Sequence[str]] = None
                         ) -> tuple[int, Optional[str], dict[str, ConfigEntry]]:
        req = DescribeConfigsRequest[VERSIONS["DescribeConfigs"]]
        resource = req.DescribeConfigsResource(resource_type=resource_type, resource_name=name,
                                               configuration_keys=None if keys is None else list(keys))
        response = self.request(DescribeConfigsRequest, DescribeConfigsResponse, self._version("DescribeConfigs"),
                                resources=[resource], include_synonyms=True, include_documentation=False)
        r = response.results[0]
        entries = {c.name: ConfigEntry(c.name, c.value, c.config_source, c.read_only,
                                       tuple((s.name, s.value, s.source) for s in (c.synonyms or ())))
                   for c in r.configs}
        return r.error_code, r.error_message, entries

    def describe_topic_configs(self, topic: str, keys: Optional[Iterable[str]] = None):
        return self.describe_configs(RESOURCE_TOPIC, topic, None if keys is None else list(keys))

    def describe_broker_configs(self, broker_id: int = 1, keys: Optional[Iterable[str]] = None):
        return self.describe_configs(RESOURCE_BROKER, str(broker_id), None if keys is None else list(keys))


__all__ = ["Client", "WireError", "UnsupportedVersion", "encode_batch", "decode_batches", "DecodedBatch",
           "ProduceOutcome", "FetchOutcome", "ListOffsetsOutcome", "ConfigEntry", "crc32c", "crc32c_pure",
           "LATEST_TIMESTAMP", "EARLIEST_TIMESTAMP", "MAX_TIMESTAMP", "INT64_MIN", "INT64_MAX"]
