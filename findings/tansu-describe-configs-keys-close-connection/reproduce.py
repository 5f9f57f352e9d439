#!/usr/bin/env python3
"""A DescribeConfigs request that names configuration keys closes the connection.

Usage: python3 reproduce.py [--bootstrap HOST:PORT]     (default localhost:9092; standard library only)

Creates a topic with cleanup.policy=compact, then describes its configs three times, each on a new connection:
for all keys (ConfigurationKeys null), and naming the key cleanup.policy at DescribeConfigs v4 (flexible) and v3.
The finding: the first is answered, the two naming a key close the connection without an answer.  Apache Kafka
answers all three (cleanup.policy=compact).  Each step prints what was sent, this broker's answer, what the
finding says and what Apache Kafka answers.  Exits 1 with REPRODUCED when every step is answered as the finding
says, 0 with NOT REPRODUCED naming the first step answered otherwise, 3 when it could not run (no broker, no topic).
"""
# ---- Kafka wire protocol, standard library only ------------------------------------------------
import argparse
import re
import socket
import struct
import sys
import time
import uuid


class Closed(Exception):
    """The broker closed the connection instead of answering."""


def now_ms():
    return int(time.time() * 1000)


def i8(v):
    return struct.pack(">b", v)


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def i64(v):
    return struct.pack(">q", v)


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def varint(v):
    return uvarint(((v << 1) ^ (v >> 63)) & (2**64 - 1))


def string(s):
    return i16(-1) if s is None else i16(len(s.encode())) + s.encode()


def compact_string(s):
    return uvarint(0) if s is None else uvarint(len(s.encode()) + 1) + s.encode()


def array(items, encode):
    return i32(-1) if items is None else i32(len(items)) + b"".join(encode(x) for x in items)


def compact_array(items, encode):
    return uvarint(0) if items is None else uvarint(len(items) + 1) + b"".join(encode(x) for x in items)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def record_batch(timestamps, header_max=None, attributes=0):
    """An uncompressed RecordBatch v2, one record per timestamp (key k<i>, value v<i>); ``header_max``
    overrides the header's MaxTimestamp (default: the records' max, as every client writes it)."""
    base = timestamps[0]
    records = b""
    for i, ts in enumerate(timestamps):
        key, value = f"k{i}".encode(), f"v{i}".encode()
        body = (i8(0) + varint(ts - base) + varint(i) + varint(len(key)) + key + varint(len(value)) + value
                + varint(0))
        records += varint(len(body)) + body
    after_crc = (i16(attributes) + i32(len(timestamps) - 1) + i64(base)
                 + i64(max(timestamps) if header_max is None else header_max)
                 + i64(-1) + i16(-1) + i32(-1) + i32(len(timestamps)) + records)
    tail = i32(-1) + i8(2) + struct.pack(">I", crc32c(after_crc)) + after_crc
    return i64(0) + i32(len(tail)) + tail


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt):
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size))[0]

    def i8(self):
        return self.unpack(">b")

    def i16(self):
        return self.unpack(">h")

    def i32(self):
        return self.unpack(">i")

    def i64(self):
        return self.unpack(">q")

    def uvarint(self):
        shift = value = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7

    def varint(self):
        z = self.uvarint()
        return (z >> 1) ^ -(z & 1)

    def string(self):
        n = self.i16()
        return None if n < 0 else self.take(n).decode()

    def compact_string(self):
        n = self.uvarint() - 1
        return None if n < 0 else self.take(n).decode()

    def bytes(self):
        n = self.i32()
        return None if n < 0 else self.take(n)

    def array(self, decode):
        n = self.i32()
        return None if n < 0 else [decode(self) for _ in range(n)]

    def compact_array(self, decode):
        n = self.uvarint() - 1
        return None if n < 0 else [decode(self) for _ in range(n)]

    def tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())


def batches(data):
    """Each stored batch of a Fetch's records: base offset, attributes, header MaxTimestamp, and each
    record's (offset, timestamp) as a consumer reads it (uncompressed batches only)."""
    out, r = [], Reader(data or b"")
    while len(r.data) - r.pos >= 61:
        base_offset, length = r.i64(), r.i32()
        end = r.pos + length
        r.take(4 + 1 + 4)  # leader epoch, magic, crc
        attributes, _, base_ts, max_ts = r.i16(), r.i32(), r.i64(), r.i64()
        r.take(8 + 2 + 4)
        records = []
        for _ in range(r.i32()):
            r.varint()
            r.i8()
            ts_delta, offset_delta = r.varint(), r.varint()
            r.take(max(r.varint(), 0))
            r.take(max(r.varint(), 0))
            for _ in range(r.varint()):
                r.take(r.varint())
                r.take(max(r.varint(), 0))
            records.append((base_offset + offset_delta, max_ts if attributes & 0x08 else base_ts + ts_delta))
        r.pos = end
        out.append({"base_offset": base_offset, "attributes": attributes, "max_timestamp": max_ts,
                    "records": records})
    return out


class Connection:
    """One connection to one broker: ``call`` sends a request and returns a Reader on its response body."""

    def __init__(self, bootstrap, timeout_s=15.0):
        host, _, port = bootstrap.rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout_s)
        self.correlation = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()

    def call(self, api_key, version, body, flexible=False):
        self.correlation += 1
        header = i16(api_key) + i16(version) + i32(self.correlation) + string("reproduce.py")
        if flexible:
            header += uvarint(0)
        frame = header + body
        self.sock.sendall(i32(len(frame)) + frame)
        size = struct.unpack(">i", self._read(4))[0]
        r = Reader(self._read(size))
        if r.i32() != self.correlation:
            raise RuntimeError("the answer's correlation id is not the request's")
        if flexible and api_key != 18:
            r.tags()
        return r

    def _read(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise Closed("the broker closed the connection without answering")
            out += chunk
        return out


def api_versions(bootstrap):
    """{api_key: max version} the broker advertises (ApiVersions v0)."""
    with Connection(bootstrap) as c:
        r = c.call(18, 0, b"")
        r.i16()
        return {key: high for key, _, high in r.array(lambda r: (r.i16(), r.i16(), r.i16()))}


def create_topic(bootstrap, name, partitions=1, configs=None):
    """CreateTopics v4: the topic's error code."""
    def topic(_):
        return (string(name) + i32(partitions) + i16(1) + array([], None)
                + array(sorted((configs or {}).items()), lambda kv: string(kv[0]) + string(kv[1])))
    with Connection(bootstrap) as c:
        r = c.call(19, 4, array([name], topic) + i32(15000) + i8(0))
        r.i32()
        return r.array(lambda r: (r.string(), r.i16(), r.string()))[0][1]


def produce(bootstrap, topic, batch, partition=0):
    """Produce v8, acks -1: (error_code, base_offset, log_append_time_ms, error_message)."""
    body = (string(None) + i16(-1) + i32(15000)
            + array([topic], lambda t: string(t) + array([partition], lambda p: i32(p) + i32(len(batch)) + batch)))
    with Connection(bootstrap) as c:
        r = c.call(0, 8, body)
        topic_answer = r.array(lambda r: (r.string(), r.array(lambda r: (
            r.i32(), r.i16(), r.i64(), r.i64(), r.i64(),
            r.array(lambda r: (r.i32(), r.string())), r.string()))))[0]
        _, error, base, log_append_time, _, _, message = topic_answer[1][0]
        return error, base, log_append_time, message


def fetch(bootstrap, topic, offset=0, partition=0, max_wait_ms=500, min_bytes=1):
    """Fetch v11: (error_code, high_watermark, stored batches) of the partition, or None when the answer
    holds no such partition."""
    part = i32(partition) + i32(-1) + i64(offset) + i64(-1) + i32(1 << 20)
    body = (i32(-1) + i32(max_wait_ms) + i32(min_bytes) + i32(1 << 20) + i8(0) + i32(0) + i32(-1)
            + array([topic], lambda t: string(t) + array([part], lambda p: p)) + array([], None) + string(""))
    with Connection(bootstrap) as c:
        r = c.call(1, 11, body)
        r.i32(), r.i16(), r.i32()
        answers = r.array(lambda r: (r.string(), r.array(lambda r: (
            r.i32(), r.i16(), r.i64(), r.i64(), r.i64(),
            r.array(lambda r: (r.i64(), r.i64())), r.i32(), r.bytes()))))
    for name, partitions in answers:
        for index, error, high_watermark, _, _, _, _, records in partitions:
            if name == topic and index == partition:
                return error, high_watermark, batches(records)
    return None


def list_offsets(bootstrap, topic, target, version=7, partition=0):
    """ListOffsets (flexible, v6 to v9): (error_code, timestamp, offset) of the partition."""
    part = i32(partition) + i32(-1) + i64(target) + uvarint(0)
    body = (i32(-1) + i8(0) + compact_array([topic], lambda t: compact_string(t) + compact_array([part], lambda p: p)
                                             + uvarint(0)) + uvarint(0))
    with Connection(bootstrap) as c:
        r = c.call(2, version, body, flexible=True)
        r.i32()

        def partition_answer(r):
            out = (r.i32(), r.i16(), r.i64(), r.i64(), r.i32())
            r.tags()
            return out

        def topic_answer(r):
            out = (r.compact_string(), r.compact_array(partition_answer))
            r.tags()
            return out
        _, error, timestamp, offset, _ = r.compact_array(topic_answer)[0][1][0]
        return error, timestamp, offset


def describe_topic_configs(bootstrap, topic, keys, version=4):
    """DescribeConfigs of a topic (v3, or v4 flexible) for ``keys`` (None: all): (error_code, {name: value})."""
    flexible = version >= 4
    if flexible:
        body = (compact_array([topic], lambda t: i8(2) + compact_string(t)
                              + compact_array(keys, compact_string) + uvarint(0)) + i8(0) + i8(0) + uvarint(0))
    else:
        body = array([topic], lambda t: i8(2) + string(t) + array(keys, string)) + i8(0) + i8(0)
    seq = Reader.compact_array if flexible else Reader.array
    text = Reader.compact_string if flexible else Reader.string

    def config(r):
        name, value = text(r), text(r)
        r.i8(), r.i8(), r.i8()  # read_only, config_source, is_sensitive
        seq(r, lambda r: (text(r), text(r), r.i8(), r.tags() if flexible else None))
        r.i8()
        text(r)
        if flexible:
            r.tags()
        return name, value

    def result(r):
        error, _, _, _ = r.i16(), text(r), r.i8(), text(r)
        configs = seq(r, config)
        if flexible:
            r.tags()
        return error, dict(configs)
    with Connection(bootstrap) as c:
        r = c.call(32, version, body, flexible=flexible)
        r.i32()
        return seq(r, result)[0]


# ---- steps: each answer next to the finding's and Apache Kafka's ------------------------------
CLOSED = "closed the connection without answering"


class Steps:
    """Runs each step once and prints what was sent, the broker's answer, what the finding says and what
    Apache Kafka answers; remembers the first step the broker answers otherwise than the finding says."""

    def __init__(self):
        self.count, self.otherwise = 0, None

    def step(self, what, sent, ask, finding, kafka, as_finding):
        try:
            answer = ask()
        except Closed:
            answer = CLOSED
        except OSError as error:
            answer = f"connection broken ({type(error).__name__}: {error})"
        agrees = as_finding(answer)
        print(f"[{self.count}] {what}")
        print(f"     sent:         {sent}")
        print(f"     this broker:  {answer}")
        print(f"     the finding:  {finding}  -> {'as the finding says' if agrees else 'NOT as the finding says'}")
        print(f"     Apache Kafka: {kafka}")
        if not agrees and self.otherwise is None:
            self.otherwise = f"[{self.count}] {what}"
        self.count += 1
        return answer

    def conclude(self, finding):
        if self.otherwise is None:
            print(f"REPRODUCED: {finding}")
            return 1
        print(f"NOT REPRODUCED: step {self.otherwise} is not answered as the finding says")
        return 0


class CouldNotRun(Exception):
    """A precondition failed (no broker, a topic not created): the finding is neither shown nor refuted."""


def need(condition, why):
    if not condition:
        raise CouldNotRun(why)


def main(run, description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--bootstrap", default="localhost:9092", help="HOST:PORT of the broker (default %(default)s)")
    args = parser.parse_args()
    if not re.fullmatch(r"[^:\s]+:\d+", args.bootstrap):
        parser.error(f"--bootstrap {args.bootstrap!r}: expected HOST:PORT")
    try:
        versions = api_versions(args.bootstrap)
        return run(args.bootstrap, versions, f"-{uuid.uuid4().hex[:8]}")
    except (OSError, Closed) as error:
        print(f"could not run: no answer from {args.bootstrap} ({type(error).__name__}: {error})")
        return 3
    except CouldNotRun as error:
        print(f"could not run: {error}")
        return 3


# ---- the finding -------------------------------------------------------------------------------
def run(bootstrap, versions, suffix):
    topic = "describe-keys" + suffix
    error = create_topic(bootstrap, topic, configs={"cleanup.policy": "compact"})
    need(error == 0, f"CreateTopics {topic} answered error {error}")
    need(versions.get(32, -1) >= 3, f"DescribeConfigs v3 is not advertised (max {versions.get(32)})")
    steps = Steps()
    kafka = "error 0, {'cleanup.policy': 'compact'}"
    steps.step("DescribeConfigs v4, every key (ConfigurationKeys null)",
               f"resource type 2 (topic) {topic}, configuration_keys null",
               lambda: describe_topic_configs(bootstrap, topic, None, 4),
               "answered, cleanup.policy=compact", kafka,
               lambda a: a != CLOSED and isinstance(a, tuple) and a[1].get("cleanup.policy") == "compact")
    for version in (4, 3):
        steps.step(f"DescribeConfigs v{version} naming the key cleanup.policy",
                   f"resource type 2 (topic) {topic}, configuration_keys ['cleanup.policy']",
                   lambda v=version: describe_topic_configs(bootstrap, topic, ["cleanup.policy"], v),
                   CLOSED, kafka, lambda a: a == CLOSED)
    return steps.conclude("the broker answers DescribeConfigs for every key, and closes the connection on one "
                          "that names a key (v4 and v3)")


if __name__ == "__main__":
    sys.exit(main(run, __doc__.splitlines()[0]))
