"""v2 record batches written and read by hand, byte for byte (see wire.py for why).

A conformance suite must send what no well-behaved producer would: any int64 timestamp (``-1``,
``Long.MIN``, ``Long.MAX``), any attribute bits, a header MaxTimestamp that disagrees with the
records, and must read back the stored batch exactly as the broker keeps it (header max,
timestamp type, each record's delta).  Also CRC32C and the zigzag varints of DefaultRecord.

Only ``reference.types`` is imported from the reference (plain data), never its rules.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ktc.reference.types import INT64_MIN, NO_TIMESTAMP, Batch, StoredBatch, StoredRecord, TimestampType, header_max

try:  # hardware/C CRC32C when available
    from crc32c import crc32c as _crc32c_fast
except ImportError:  # pragma: no cover - exercised only without the wheel
    _crc32c_fast = None  # type: ignore[assignment]  # then the pure-Python table below computes it

CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
CODEC_NAMES = {v: k for k, v in CODEC_IDS.items()}
ATTR_TIMESTAMP_TYPE = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_TIMESTAMP_EXTENDED = 0x80  # KIP-228's proposed bit; no released broker defines it
BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")  # baseOffset .. recordCount: 61 bytes
CRC_START = 21  # attributes start: baseOffset(8) length(4) leaderEpoch(4) magic(1) crc(4)


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

    return {
        "gzip": (codec.gzip_encode, codec.gzip_decode),
        "snappy": (codec.snappy_encode, codec.snappy_decode),
        "lz4": (codec.lz4_encode, codec.lz4_decode),
        "zstd": (codec.zstd_encode, codec.zstd_decode),
    }[name]


def encode_batch(
    batch: Batch,
    *,
    base_offset: int = 0,
    base_timestamp: int | None = None,
    attributes: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = -1,
    bad_crc: bool = False,
) -> bytes:
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
    header = bytearray(
        BATCH_HEADER.pack(
            base_offset,
            length,
            partition_leader_epoch,
            2,
            0,
            attributes,
            max(len(records) - 1, 0),
            wrap64(base_ts),
            wrap64(header_max(batch)),
            producer_id,
            producer_epoch,
            base_sequence,
            len(records),
        )
    )
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
    leader_epoch: int = -1  # partitionLeaderEpoch: the leader epoch the batch was appended in

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
        (_, _, epoch, _, crc, attributes, last_delta, base_ts, max_ts, producer_id, _, _, count) = (
            BATCH_HEADER.unpack_from(view, pos)
        )
        crc_ok = crc32c(bytes(view[pos + CRC_START : end])) == crc
        body = view[pos + BATCH_HEADER.size : end]
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
        out.append(
            DecodedBatch(
                base_offset, attributes, last_delta, base_ts, max_ts, producer_id, tuple(records), crc_ok, epoch
            )
        )
        pos = end
    return out
