"""What a client puts on the wire, before the broker rewrites it: a loopback proxy that keeps every Produce.

    with CaptureProxy() as proxy:                  # proxy.port: where the client is sent (rig.py advertises it)
        proxy.target = ("127.0.0.1", broker_port)
        ... the client produces through proxy.port ...
        proxy.produced(topic)                      # -> [Sent(version, partition, batch), ...] in order sent

Kafka frames are length-prefixed (4 bytes, big-endian).  The proxy copies whole frames both ways, unchanged,
and decodes each Produce request's header and body (versions 3 to 13: the classic and the flexible
encodings, a topic named or, from v13, given by id) down to its record batches, decoded by the toolkit's
``decode_batches``: the batch header as the client wrote it (attributes, first timestamp, MaxTimestamp) and
each record's first timestamp + delta.  Stdlib only: one thread accepts, two threads per connection copy.
"""

from __future__ import annotations

import socket
import struct
import threading
from dataclasses import dataclass

from ktc.kafka.client.records import DecodedBatch, decode_batches

PRODUCE = 0
FLEXIBLE_FROM = 9  # Produce v9: compact strings and arrays, tagged fields
TOPIC_ID_FROM = 13


@dataclass(frozen=True)
class Sent:
    """One partition's batches of one Produce request, as the client sent them."""

    version: int
    topic: str  # the name, or from v13 the topic id in hex
    partition: int
    batches: tuple[DecodedBatch, ...]


class Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = memoryview(data), 0

    def take(self, fmt: str):
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def raw(self, n: int) -> bytes:
        out = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return out

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            byte = self.data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7

    def string(self, flexible: bool) -> str | None:
        n = self.uvarint() - 1 if flexible else self.take(">h")
        return None if n < 0 else self.raw(n).decode(errors="replace")

    def count(self, flexible: bool) -> int:
        return self.uvarint() - 1 if flexible else self.take(">i")

    def blob(self, flexible: bool) -> bytes:
        n = self.uvarint() - 1 if flexible else self.take(">i")
        return b"" if n < 0 else self.raw(n)

    def tags(self, flexible: bool) -> None:
        for _ in range(self.uvarint() if flexible else 0):
            self.uvarint()
            self.raw(self.uvarint())


def parse_produce(frame: bytes) -> list[Sent]:
    """The batches of one Produce request frame (without its size prefix)."""
    r = Reader(frame)
    _, version, _ = r.take(">h"), r.take(">h"), r.take(">i")
    flexible = version >= FLEXIBLE_FROM
    r.string(False)  # client_id: a classic nullable string in every header version
    r.tags(flexible)
    r.string(flexible)  # transactional_id
    r.take(">h"), r.take(">i")  # acks, timeout
    out = []
    for _ in range(r.count(flexible)):
        topic = r.raw(16).hex() if version >= TOPIC_ID_FROM else r.string(flexible)
        for _ in range(r.count(flexible)):
            partition, records = r.take(">i"), r.blob(flexible)
            r.tags(flexible)
            out.append(Sent(version, topic or "", partition, tuple(decode_batches(records))))
        r.tags(flexible)
    return out


def read_frame(sock: socket.socket) -> bytes | None:
    head = read_exactly(sock, 4)
    return None if head is None else read_exactly(sock, struct.unpack(">i", head)[0])


def read_exactly(sock: socket.socket, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        try:
            chunk = sock.recv(n - got)
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


class CaptureProxy:
    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.target: tuple[str, int] | None = None
        self.sent: list[Sent] = []
        self.unreadable: list[str] = []  # Produce frames the proxy could not decode (forwarded all the same)
        self.lock, self.stopping, self.sockets = threading.Lock(), False, set()

    def __enter__(self) -> CaptureProxy:
        threading.Thread(target=self.accept_loop, name="capture-accept", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def produced(self, topic: str) -> list[Sent]:
        with self.lock:
            return [s for s in self.sent if s.topic == topic]

    def accept_loop(self) -> None:
        while not self.stopping:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target or ("127.0.0.1", 0), timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self.lock:
                self.sockets |= {client, upstream}
            threading.Thread(target=self.copy, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self.copy, args=(upstream, client, False), daemon=True).start()

    def copy(self, source: socket.socket, sink: socket.socket, requests: bool) -> None:
        while True:
            frame = read_frame(source)
            if frame is None:
                break
            if requests and struct.unpack_from(">h", frame)[0] == PRODUCE:
                self.keep(frame)
            try:
                sink.sendall(struct.pack(">i", len(frame)) + frame)
            except OSError:
                break
        for sock in (source, sink):
            close(sock)

    def keep(self, frame: bytes) -> None:
        try:
            found = parse_produce(frame)
        except Exception as error:  # a frame this decoder cannot read is said, and still forwarded
            with self.lock:
                self.unreadable.append(f"{type(error).__name__}: {error}")
            return
        with self.lock:
            self.sent.extend(found)

    def stop(self) -> None:
        self.stopping = True
        close(self.listener)
        with self.lock:
            sockets, self.sockets = list(self.sockets), set()
        for sock in sockets:
            close(sock)


def close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
