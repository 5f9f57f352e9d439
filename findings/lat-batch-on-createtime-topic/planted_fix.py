#!/usr/bin/env python3
"""The proposed fix, planted in front of a broker: reproduce.py run through a proxy that answers a Produce of a
batch flagged LogAppendTime with INVALID_TIMESTAMP (32), as a broker with the fix would, and passes every other
request through unchanged.  The reproducer must print NOT REPRODUCED.

Usage: python3 planted_fix.py --bootstrap HOST:PORT     (a running broker; stdlib only, plus what reproduce.py needs)

Prints reproduce.py's output, then how many produce requests the proxy refused; exits with reproduce.py's code.
The proxy answers only the raw connection reproduce.py opens to the address it is given; kafka-python's admin
client, which creates the topic, follows the broker's advertised address and so talks to the broker itself.
"""
import argparse
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

PRODUCE, LOG_APPEND_TIME = 0, 0x08
INVALID_TIMESTAMP = 32
REFUSAL = ("Invalid timestamp type in message (refused by the planted fix). Producer should not set timestamp type "
           "to LogAppendTime.")


def read_exactly(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed")
        out += chunk
    return out


def read_frame(sock):
    size = struct.unpack(">i", read_exactly(sock, 4))[0]
    return read_exactly(sock, size)


def string(data, pos):
    (n,) = struct.unpack_from(">h", data, pos)
    return data[pos + 2:pos + 2 + max(n, 0)].decode(), pos + 2 + max(n, 0)


def flagged_produce(frame):
    """(correlation id, topic, partition) of a Produce v3-v8 request whose batch carries the LogAppendTime bit."""
    api, version, correlation = struct.unpack_from(">hhi", frame, 0)
    if api != PRODUCE or not 3 <= version <= 8:
        return None
    _client, pos = string(frame, 8)
    _transactional, pos = string(frame, pos)
    pos += 2 + 4 + 4  # acks, timeout, one topic
    topic, pos = string(frame, pos)
    partition, size = struct.unpack_from(">iii", frame, pos + 4)[:2]
    batch = frame[pos + 12:pos + 12 + size]
    attributes = struct.unpack_from(">h", batch, 21)[0] if len(batch) >= 23 else 0
    return (correlation, topic, partition) if attributes & LOG_APPEND_TIME else None


def refusal(correlation, topic, partition):
    """A Produce v8 response: INVALID_TIMESTAMP for the partition, with the record error a fixed broker gives."""
    name, text = topic.encode(), REFUSAL.encode()
    said = b"One or more records have been rejected due to invalid timestamp"
    body = struct.pack(">ii", correlation, 1) + struct.pack(">h", len(name)) + name + struct.pack(">i", 1)
    body += struct.pack(">ihqqq", partition, INVALID_TIMESTAMP, -1, -1, -1)
    body += struct.pack(">ii", 1, 0) + struct.pack(">h", len(text)) + text
    body += struct.pack(">h", len(said)) + said + struct.pack(">i", 0)
    return struct.pack(">i", len(body)) + body


class Proxy:
    def __init__(self, broker):
        host, port = broker.rsplit(":", 1)
        self.broker, self.refused = (host, int(port)), 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.bootstrap = f"127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            threading.Thread(target=self.serve, args=(client,), daemon=True).start()

    def serve(self, client):
        """One request at a time, as the reproducer sends them: refused here or passed to the broker."""
        upstream = socket.create_connection(self.broker)
        try:
            while True:
                frame = read_frame(client)
                refused = flagged_produce(frame)
                if refused is not None:
                    self.refused += 1
                    client.sendall(refusal(*refused))
                    continue
                upstream.sendall(struct.pack(">i", len(frame)) + frame)
                answer = read_frame(upstream)
                client.sendall(struct.pack(">i", len(answer)) + answer)
        except (ConnectionError, OSError):
            pass
        finally:
            client.close()
            upstream.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    args = parser.parse_args()
    proxy = Proxy(args.bootstrap)
    reproducer = Path(__file__).with_name("reproduce.py")
    done = subprocess.run([sys.executable, str(reproducer), "--bootstrap", proxy.bootstrap], capture_output=True,
                          text=True, timeout=300)
    print(done.stdout + done.stderr, end="")
    print(f"(planted fix: the proxy at {proxy.bootstrap} answered {proxy.refused} produce request(s) flagged "
          f"LogAppendTime with INVALID_TIMESTAMP; reproduce.py exited {done.returncode})")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
