#!/usr/bin/env python3
"""Reproduce a ktc hunt finding against any Kafka broker.

Finding: KIP-937.after-bound (KIP-937): "with a maximum allowable difference determined by the value of
log.message.timestamp.after.max.ms"

Usage: python3 reproduce.py [--bootstrap HOST:PORT]     (default localhost:9092; needs kafka-python)

Replays the minimised history on fresh topics: topics with their configs (kafka-python's admin client),
each batch encoded here byte for byte (RecordBatch v2, CRC32C included: kafka-python cannot send a batch
whose header disagrees with its records) and sent as a raw Produce v8, ListOffsets as a raw request (the
isolation level the history asks for), the log read back with a raw Fetch (every batch header, as stored).
Timestamps near the history's start are moved to the broker's clock now; the int64 ends, -1, 0 and other far
values are sent as they are.  Each step prints what was sent, the broker's answer, the answer the finding
records and the KIP's (ktc's model).  REPRODUCED only when the broker answers every step as the finding records
(a timestamp the broker stamps from its own clock is not compared); a broker that answers any step otherwise, a
fixed one that refuses what the finding's broker accepted among them, is NOT REPRODUCED, with the first such step
named.  Exits 1 when reproduced, 0 when not, 3 when it could not replay the history here (one line says why: a
config this broker does not know, no broker).
Written by `ktc hunt`; it imports nothing of ktc.
"""
import argparse
import json
import re
import socket
import struct
import sys
import time
import uuid

DATA = json.loads('{\n "clause": "KIP-937.after-bound",\n "kip": "KIP-937",\n "quote": "with a maximum allowable difference determined by the value of log.message.timestamp.after.max.ms",\n "statement": "On a CreateTime topic a record with timestamp ts is rejected when ts - now > message.timestamp.after.max.ms.",\n "start_ms": 1700000000000,\n "found_on": "Apache Kafka 4.4.0",\n "model": "ktc\'s model: Kafka 4\'s defaults (message.timestamp.after.max.ms one hour), each record validated on its own timestamp as KIP-937 says",\n "topics": {\n  "t": {\n   "partitions": 1,\n   "configs": {}\n  }\n },\n "ops": [\n  {\n   "op": "Produce",\n   "summary": "Produce {\\"topic\\": \\"t\\", \\"batch\\": {\\"type\\": \\"Batch\\", \\"records\\": [{\\"type\\": \\"Record\\", \\"timestamp\\": 1731536000000, \\"key\\": null, \\"value\\": {\\"hex\\": \\"612079656172206168656164\\"}}], \\"codec\\": \\"none\\", \\"timestamp_type\\": \\"LogAppendTime\\", \\"max_timestamp\\": 1700000000000, \\"transactional\\": false, \\"control\\": false, \\"timestamp_e",\n   "topic": "t",\n   "partition": 0,\n   "batch": {\n    "timestamps": [\n     1731536000000\n    ],\n    "codec": "none",\n    "keys": [\n     null\n    ],\n    "values": [\n     "612079656172206168656164"\n    ],\n    "attributes": 8,\n    "header_max": 1700000000000\n   },\n   "found": {\n    "error_code": 0,\n    "record_errors": []\n   },\n   "expected": {\n    "error_code": 32,\n    "record_errors": [\n     [\n      0,\n      "Timestamp 1731536000000 of message with offset 0 is out of range. The timestamp should be within [-9223370336854775807, 1700003600000]"\n     ]\n    ]\n   }\n  },\n  {\n   "op": "Fetch",\n   "summary": "Fetch {\\"topic\\": \\"t\\", \\"partition\\": 0}",\n   "topic": "t",\n   "partition": 0,\n   "found": {\n    "error_code": 0,\n    "batches": [\n     {\n      "base_offset": 0,\n      "log_append_time": false,\n      "max_timestamp": 1700000000000,\n      "records": [\n       [\n        0,\n        1731536000000\n       ]\n      ]\n     }\n    ]\n   },\n   "expected": {\n    "error_code": 0,\n    "batches": []\n   }\n  },\n  {\n   "op": "ListOffsets",\n   "summary": "ListOffsets {\\"topic\\": \\"t\\", \\"target\\": 1731536000000, \\"partition\\": 0, \\"version\\": null, \\"isolation_level\\": 0}",\n   "topic": "t",\n   "partition": 0,\n   "target": 1731536000000,\n   "version": null,\n   "isolation_level": 0,\n   "found": {\n    "error_code": 0,\n    "offset": -1,\n    "timestamp": -1\n   },\n   "expected": {\n    "error_code": 0,\n    "offset": -1,\n    "timestamp": -1\n   }\n  }\n ],\n "mismatch": {\n  "op_index": 0,\n  "what": "Produce error_code",\n  "expected": "32",\n  "observed": "0",\n  "clock": "timestamps at the wall clock of ktc\'s run"\n }\n}')  # noqa: E501
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
        self.sock, self.correlation = socket.create_connection((host, int(port)), timeout=10), 0
        self.sock.settimeout(30)
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


def list_offsets(wire, topic, partition, target, version, isolation_level):
    version = min(max(version or 7, 7), 11, wire.newest(2))  # 3.5-3.8 answer v8 at most, 3.9 v9, 4.2+ v11
    topics = uvarint(2) + uvarint(len(topic) + 1) + topic.encode() + uvarint(2)
    topics += struct.pack(">iiq", partition, -1, target) + b"\x00" + b"\x00"
    body = struct.pack(">ib", -1, isolation_level) + topics
    body += (struct.pack(">i", 30_000) if version >= 10 else b"") + b"\x00"
    answer = wire.call(2, version, body, flexible=True)
    pos = 4 + 1
    name_len = answer[pos] - 1
    pos += 1 + name_len + 1
    _index, error, timestamp, offset = struct.unpack_from(">ihqq", answer, pos)
    sent = f"ListOffsets v{version}, partition {partition}, target {target}, isolation_level {isolation_level}"
    return {"error_code": error, "timestamp": timestamp, "offset": offset}, sent


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
    """Every op of the history in turn: (the broker's answers, what was sent for each, the clock shift)."""
    names = {t: f"ktc-repro-{uuid.uuid4().hex[:8]}-{t}" for t in DATA["topics"]}
    wire = Wire(bootstrap)  # first: a broker that is not there is said at once, not after the admin's retries
    create_topics(bootstrap, names)
    shift, answers, sent = int(time.time() * 1000) - DATA["start_ms"], [], []
    for op in DATA["ops"]:
        answer, said, shift = one_op(wire, names, op, shift)
        answers.append(answer)
        sent.append(said)
    return answers, sent, shift


def one_op(wire, names, op, shift):
    kind = op["op"]
    if kind == "Produce":
        batch = op["batch"]
        stamps = [moved(t, shift) for t in batch["timestamps"]]
        said = (f"Produce v8, partition {op['partition']}, one batch: attributes 0x{batch['attributes']:02x}, header "
                f"MaxTimestamp {moved(batch['header_max'], shift)}, record timestamps {stamps}")
        return produce(wire, names[op["topic"]], op["partition"], encode_batch(batch, shift)), said, shift
    if kind == "ListOffsets":
        target = moved(op["target"], shift) if op["target"] >= 0 else op["target"]
        answer, said = list_offsets(wire, names[op["topic"]], op["partition"], target, op.get("version"),
                                    op.get("isolation_level", 0))
        return answer, said, shift
    if kind == "Fetch":
        said = f"Fetch v4 from offset 0, partition {op['partition']}"
        return fetch(wire, names[op["topic"]], op["partition"]), said, shift
    if kind == "Advance" and op["ms"] <= 5_000:
        time.sleep(op["ms"] / 1000)
        return {"slept_ms": op["ms"]}, f"slept {op['ms']} ms", shift
    if kind == "Advance":  # the clock cannot jump: later timestamps move back instead
        return {"note": f"clock advanced {op['ms']} ms by moving later timestamps back"}, "nothing", shift - op["ms"]
    return {"note": f"{kind} not replayed here ({op.get('why', 'needs the broker itself')})"}, "nothing", shift


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    args = parser.parse_args()
    try:
        answers, sent, shift = replay(args.bootstrap)
    except Exception as error:  # noqa: BLE001 - one line, not a traceback: exit 1 means reproduced
        print(f"COULD NOT RUN: {type(error).__name__}: {error}")
        return 3
    print(f"Each step: what was sent, this broker's answer, the answer the finding records ({DATA['found_on']}) and "
          f"the KIP's ({DATA['model']}).")
    steps = [step(i, op, answer, said, shift) for i, (op, answer, said) in enumerate(zip(DATA["ops"], answers, sent))]
    return verdict(steps)


def verdict(steps):
    """Exit 1 (and REPRODUCED) when every step answered as the finding records, else 0 naming the first that
    did not; the clause and where the finding departs from it are printed first."""
    m = DATA["mismatch"]
    print(f"\n{DATA['clause']} ({DATA['kip']}) says:\n  \"{DATA['quote']}\"")
    print(f"The finding departs from it at op [{m['op_index']}], {m['what']}:\n  the KIP: "
          f"{m['expected']}\n  the broker ktc found it on ({DATA['found_on']}): {m['observed']}\n  ({m['clock']})")
    differs = [(i, code) for i, same, code in steps if not same]
    if not differs:
        print("REPRODUCED: the broker answers every step as the finding records")
        return 1
    i, code = differs[0]
    fixed = f"; there it answers the KIP's error code, {code}, as a fixed broker would" if code is not None else ""
    print(f"NOT REPRODUCED: the broker answers step [{i}] otherwise than the finding records{fixed}")
    return 0


def step(i, op, answer, said, shift):
    """Print one step; (index, answered as the finding records, the KIP's error code where the broker answers it
    and the finding's broker did not, else None)."""
    found, kip = op.get("found"), op.get("expected")
    same = found is None or agrees(answer, found, shift)
    code = answer.get("error_code") if isinstance(answer, dict) else None
    kip_code = code if kip and found and code == kip.get("error_code") != found.get("error_code") else None
    print(f"[{i}] {op['summary']}\n     sent:   {said}\n     broker: {json.dumps(answer)}")
    if found is not None:
        print(f"     the finding: {json.dumps(moved_answer(found, shift))}"
              f"  -> this broker {'answers as the finding records' if same else 'answers OTHERWISE'}")
    if kip is not None:
        print(f"     the KIP:     {json.dumps(moved_answer(kip, shift))}")
    return i, same, kip_code


def agrees(seen, want, shift):
    """The broker's answer is the recorded one: every recorded field, timestamps moved as the history's were
    (None: the broker's own clock, not compared), record error texts with their timestamps left out."""
    if not isinstance(seen, dict):
        return False
    return all(key in seen and same_field(key, seen[key], value, shift) for key, value in want.items())


def same_field(key, seen, want, shift):
    if key == "batches":
        return len(seen) == len(want) and all(same_batch(s, w, shift) for s, w in zip(seen, want))
    if key == "record_errors":
        return [[i, unclocked(t)] for i, t in seen] == [[i, unclocked(t)] for i, t in want]
    if key in ("timestamp", "log_append_time"):
        return want is None or seen == moved(want, shift)
    return seen == want


def same_batch(seen, want, shift):
    stamps = lambda b, move: [[o, (moved(t, shift) if move else t)] for o, t in b["records"]]
    if seen["base_offset"] != want["base_offset"] or seen["log_append_time"] != want["log_append_time"]:
        return False
    if [o for o, _ in seen["records"]] != [o for o, _ in want["records"]]:
        return False
    clocked = want["max_timestamp"] is None or any(t is None for _, t in want["records"])
    return clocked or (seen["max_timestamp"] == moved(want["max_timestamp"], shift)
                       and stamps(seen, False) == stamps(want, True))


def unclocked(text):
    """A record error's text without its timestamps (the broker's now is in it): ten digits or more."""
    return None if text is None else re.sub(r"-?\d{10,}", "N", text)


def moved_answer(answer, shift):
    """A recorded answer at this run's clock, for printing."""
    move = lambda t: None if t is None else moved(t, shift)
    out = dict(answer)
    if "batches" in out:
        out["batches"] = [{**b, "max_timestamp": move(b["max_timestamp"]),
                           "records": [[o, move(t)] for o, t in b["records"]]} for b in out["batches"]]
    for key in ("timestamp", "log_append_time"):
        if key in out:
            out[key] = move(out[key])
    return out


if __name__ == "__main__":
    sys.exit(main())
