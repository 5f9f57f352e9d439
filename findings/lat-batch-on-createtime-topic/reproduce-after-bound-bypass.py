#!/usr/bin/env python3
"""Reproduce a ktc hunt finding against any Kafka broker.

Finding: KIP-937.after-bound (KIP-937): "with a maximum allowable difference determined by the value of
log.message.timestamp.after.max.ms"

Usage: python3 reproduce.py [--bootstrap HOST:PORT]     (default localhost:9092; needs kafka-python)

Replays the minimised history on fresh topics: topics with their configs (kafka-python's admin client),
each batch encoded here byte for byte (RecordBatch v2, CRC32C included: kafka-python cannot send a batch
whose header disagrees with its records) and sent as a raw Produce v8, ListOffsets as a raw request, the
log read back with a raw Fetch (every batch header, as stored).  Timestamps near the history's start are moved to the
broker's clock now; the int64 ends, -1, 0 and other far values are sent as they are.  Prints what the KIP
says next to what the broker did; exits 1 when the broker answers as the finding says, 0 when it does not.
Written by `ktc hunt`; it imports nothing of ktc.
"""
import argparse
import json
import socket
import struct
import sys
import time
import uuid

DATA = json.loads('{\n "clause": "KIP-937.after-bound",\n "kip": "KIP-937",\n "quote": "with a maximum allowable difference determined by the value of log.message.timestamp.after.max.ms",\n "statement": "On a CreateTime topic a record with timestamp ts is rejected when ts - now > message.timestamp.after.max.ms.",\n "start_ms": 1700000000000,\n "found_on": "hand-made variant",\n "topics": {\n  "t": {\n   "partitions": 1,\n   "configs": {}\n  }\n },\n "ops": [\n  {\n   "op": "Produce",\n   "summary": "Produce {\\"topic\\": \\"t\\", \\"batch\\": {\\"type\\": \\"Batch\\", \\"records\\": [{\\"type\\": \\"Record\\", \\"timestamp\\": 1731536000000, \\"key\\": null, \\"value\\": {\\"hex\\": \\"78\\"}}], \\"codec\\": \\"none\\", \\"timestamp_type\\": \\"LogAppendTime\\", \\"max_timestamp\\": 1700000000000, \\"transactional\\": false, \\"control\\": false, \\"timestamp_extended\\": false}, \\"par",\n   "topic": "t",\n   "partition": 0,\n   "batch": {\n    "timestamps": [\n     1731536000000\n    ],\n    "codec": "none",\n    "keys": [\n     null\n    ],\n    "values": [\n     "78"\n    ],\n    "attributes": 8,\n    "header_max": 1700000000000\n   }\n  },\n  {\n   "op": "Fetch",\n   "summary": "Fetch {\\"topic\\": \\"t\\", \\"partition\\": 0}",\n   "topic": "t",\n   "partition": 0\n  },\n  {\n   "op": "ListOffsets",\n   "summary": "ListOffsets {\\"topic\\": \\"t\\", \\"target\\": -3, \\"partition\\": 0, \\"version\\": 7, \\"read_committed\\": false}",\n   "topic": "t",\n   "partition": 0,\n   "target": -3,\n   "version": 7\n  }\n ],\n "mismatch": {\n  "op_index": 0,\n  "what": "Produce error_code",\n  "expected": "0",\n  "observed": "0"\n },\n "found_answer": {\n  "error_code": 0,\n  "record_errors": []\n }\n}')  # noqa: E501
INT64 = 1 << 64
FAR_MS = 10 * 365 * 86_400_000  # farther than this from the start: sent as is
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def wrap64(v):
    v %= INT64
    return v - INT64 if v >= 1 << 63 else v


def varint(v, bits=64):
    z = ((v << 1) ^ (v >> (bits - 1))) & ((1 << bits) - 1)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def compress(codec, body):
    if codec == "none":
        return body
    from kafka import codec as kc
    encode = {"gzip": kc.gzip_encode, "snappy": kc.snappy_encode, "lz4": kc.lz4_encode, "zstd": kc.zstd_encode}
    return encode[codec](body)


def encode_batch(batch, shift):
    """A magic-2 RecordBatch: base timestamp = the first record's, header max as the finding sent it."""
    stamps = [moved(ts, shift) for ts in batch["timestamps"]]
    base = stamps[0] if stamps else -1
    body = bytearray()
    for i, ts in enumerate(stamps):
        key, value = batch["keys"][i], bytes.fromhex(batch["values"][i])
        key_part = varint(-1, 32) if key is None else varint(len(key) // 2, 32) + bytes.fromhex(key)
        rec = b"\x00" + varint(wrap64(ts - base)) + varint(i, 32) + key_part + varint(len(value), 32) + value
        rec += varint(0, 32)
        body += varint(len(rec), 32) + rec
    body = compress(batch["codec"], bytes(body))
    head_max = moved(batch["header_max"], shift)
    header = struct.pack(">hiqqqhii", batch["attributes"], max(len(stamps) - 1, 0), wrap64(base), wrap64(head_max),
                         -1, -1, -1, len(stamps))
    tail = header + body
    return struct.pack(">qiib", 0, 4 + 1 + 4 + len(tail), -1, 2) + struct.pack(">I", crc32c(tail)) + tail


def moved(ts, shift):
    """A timestamp near the history's start, moved by the same amount as the clock; a far one as is."""
    return ts + shift if abs(ts - DATA["start_ms"]) <= FAR_MS else ts


class Wire:
    def __init__(self, address):
        host, port = address.rsplit(":", 1)
        self.sock, self.correlation = socket.create_connection((host, int(port)), timeout=30), 0
        self.versions = None

    def newest(self, api):
        """The newest version of ``api`` the broker answers (ApiVersions v0, asked once)."""
        if self.versions is None:
            answer = self.call(18, 0, b"")
            (count,) = struct.unpack_from(">i", answer, 2)
            keys = (struct.unpack_from(">hhh", answer, 6 + 6 * i) for i in range(count))
            self.versions = {key: high for key, _low, high in keys}
        return self.versions.get(api, 0)

    def call(self, api, version, body, flexible=False):
        self.correlation += 1
        head = struct.pack(">hhi", api, version, self.correlation) + struct.pack(">h", 3) + b"ktc"
        head += b"\x00" if flexible else b""
        payload = head + body
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", self.read(4))[0]
        answer = self.read(size)
        return answer[5:] if flexible else answer[4:]

    def read(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            out += chunk
        return out


def string(s):
    raw = s.encode()
    return struct.pack(">h", len(raw)) + raw


def produce(wire, topic, partition, batch):
    records = batch
    body = struct.pack(">hhi", -1, -1, 30_000) + struct.pack(">i", 1) + string(topic) + struct.pack(">i", 1)
    body += struct.pack(">ii", partition, len(records)) + records
    answer = wire.call(0, 8, body)
    pos = 4
    (name_len,) = struct.unpack_from(">h", answer, pos)
    pos += 2 + name_len + 4
    _index, error, base_offset, append_time, log_start = struct.unpack_from(">ihqqq", answer, pos)
    pos += 30
    (count,) = struct.unpack_from(">i", answer, pos)
    pos, record_errors = pos + 4, []
    for _ in range(max(count, 0)):
        (batch_index,) = struct.unpack_from(">i", answer, pos)
        said, pos = nullable_string(answer, pos + 4)
        record_errors.append([batch_index, said])
    message, pos = nullable_string(answer, pos)
    return {"error_code": error, "record_errors": record_errors, "base_offset": base_offset,
            "log_append_time": append_time, "log_start_offset": log_start, "error_message": message}


def nullable_string(data, pos):
    (n,) = struct.unpack_from(">h", data, pos)
    return (data[pos + 2:pos + 2 + n].decode(errors="replace") if n >= 0 else None), pos + 2 + max(n, 0)


def list_offsets(wire, topic, partition, target, version):
    version = min(max(version or 7, 7), 10, wire.newest(2))  # 3.5-3.8 answer v8 at most, 3.9 v9
    topics = uvarint(2) + uvarint(len(topic) + 1) + topic.encode() + uvarint(2)
    topics += struct.pack(">iiq", partition, -1, target) + b"\x00" + b"\x00"
    body = struct.pack(">ib", -1, 0) + topics + (struct.pack(">i", 30_000) if version >= 10 else b"") + b"\x00"
    answer = wire.call(2, version, body, flexible=True)
    pos = 4 + 1
    name_len = answer[pos] - 1
    pos += 1 + name_len + 1
    _index, error, timestamp, offset = struct.unpack_from(">ihqq", answer, pos)
    return {"error_code": error, "timestamp": timestamp, "offset": offset}


def fetch(wire, topic, partition):
    """A raw Fetch v4 from offset 0: every stored batch's header (base offset, type, MaxTimestamp) and records."""
    body = struct.pack(">iiiib", -1, 500, 1, 8 << 20, 0) + struct.pack(">i", 1) + string(topic)
    body += struct.pack(">i", 1) + struct.pack(">iqi", partition, 0, 8 << 20)
    answer = wire.call(1, 4, body)
    pos = 4 + 4
    (n,) = struct.unpack_from(">h", answer, pos)
    pos += 2 + n + 4
    _index, error, _hw, _lso = struct.unpack_from(">ihqq", answer, pos)
    pos += 22
    (aborted,) = struct.unpack_from(">i", answer, pos)
    pos += 4 + max(aborted, 0) * 16
    (size,) = struct.unpack_from(">i", answer, pos)
    data = answer[pos + 4:pos + 4 + max(size, 0)]
    return {"error_code": error, "batches": list(batches(data))}


def batches(data):
    pos = 0
    while pos + 61 <= len(data):
        base_offset, length = struct.unpack_from(">qi", data, pos)
        if pos + 12 + length > len(data):
            break
        attributes, _last, base_ts, max_ts = struct.unpack_from(">hiqq", data, pos + 21)
        count = struct.unpack_from(">i", data, pos + 57)[0]
        body = decompress(attributes & 7, data[pos + 61:pos + 12 + length])
        stamps = [[base_offset + d, wrap64(base_ts + t)] for d, t in records(body, count)]
        yield {"base_offset": base_offset, "log_append_time": bool(attributes & 8), "max_timestamp": max_ts,
               "records": stamps}
        pos += 12 + length


def decompress(codec, body):
    if codec == 0:
        return body
    from kafka import codec as kc
    return {1: kc.gzip_decode, 2: kc.snappy_decode, 3: kc.lz4_decode, 4: kc.zstd_decode}[codec](body)


def read_varint(data, pos):
    shift = value = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1), pos


def records(body, count):
    """(offset delta, timestamp delta) of each record."""
    pos = 0
    for _ in range(count):
        length, pos = read_varint(body, pos)
        end = pos + length
        ts_delta, at = read_varint(body, pos + 1)
        offset_delta, _ = read_varint(body, at)
        yield offset_delta, ts_delta
        pos = end


def create_topics(bootstrap, names):
    from kafka.admin import KafkaAdminClient, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    topics = [NewTopic(names[t], num_partitions=c["partitions"], replication_factor=1,
                       topic_configs={k: str(v) for k, v in c["configs"].items()})
              for t, c in DATA["topics"].items()]
    admin.create_topics(topics)
    admin.close()
    time.sleep(1.0)


def replay(bootstrap):
    names = {t: f"ktc-repro-{uuid.uuid4().hex[:8]}-{t}" for t in DATA["topics"]}
    create_topics(bootstrap, names)
    wire, shift, answers = Wire(bootstrap), int(time.time() * 1000) - DATA["start_ms"], []
    for op in DATA["ops"]:
        kind = op["op"]
        if kind == "Produce":
            answers.append(produce(wire, names[op["topic"]], op["partition"], encode_batch(op["batch"], shift)))
        elif kind == "ListOffsets":
            target = moved(op["target"], shift) if op["target"] >= 0 else op["target"]
            answers.append(list_offsets(wire, names[op["topic"]], op["partition"], target, op.get("version")))
        elif kind == "Fetch":
            answers.append(fetch(wire, names[op["topic"]], op["partition"]))
        elif kind == "Advance" and op["ms"] <= 5_000:
            time.sleep(op["ms"] / 1000)
            answers.append({"slept_ms": op["ms"]})
        elif kind == "Advance":
            shift -= op["ms"]  # the clock cannot jump: later timestamps move back instead
            answers.append({"note": f"clock advanced {op['ms']} ms by moving later timestamps back"})
        else:
            answers.append({"note": f"{kind} not replayed here ({op.get('why', 'needs the broker itself')})"})
    return answers, shift


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    args = parser.parse_args()
    try:
        answers, shift = replay(args.bootstrap)
    except Exception as error:  # noqa: BLE001 - one line, not a traceback: exit 1 means reproduced
        print(f"COULD NOT RUN: {type(error).__name__}: {error}")
        return 3
    for i, (op, answer) in enumerate(zip(DATA["ops"], answers)):
        print(f"[{i}] {op['summary']}\n     broker: {json.dumps(answer)}")
    m = DATA["mismatch"]
    print(f"\n{DATA['clause']} ({DATA['kip']}) says:\n  \"{DATA['quote']}\"")
    print(f"At op [{m['op_index']}], {m['what']}:\n  the KIP (ktc's model at the history's clock): {m['expected']}"
          f"\n  the broker ktc found it on ({DATA['found_on']}): {m['observed']}")
    seen = answers[m["op_index"]] if m["op_index"] is not None and m["op_index"] < len(answers) else None
    print(f"  this broker: {json.dumps(seen)}")
    again = same_shape(seen, DATA["found_answer"], shift)
    print("REPRODUCED: the broker answers as the finding says" if again else
          "NOT REPRODUCED: the broker answers otherwise (compare the lines above)")
    return 1 if again else 0


def same_shape(seen, found, shift):
    """The finding's answer (its timestamps moved as the history's were) is the broker's answer."""
    if seen is None or found is None:
        return False
    return all(key in seen and seen[key] == moved_answer(key, value, shift) for key, value in found.items())


def moved_answer(key, value, shift):
    if key == "batches":
        return [{**b, "max_timestamp": moved(b["max_timestamp"], shift),
                 "records": [[o, moved(t, shift)] for o, t in b["records"]]} for b in value]
    return moved(value, shift) if key in ("timestamp", "log_append_time") else value


if __name__ == "__main__":
    sys.exit(main())
