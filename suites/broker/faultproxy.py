"""A loopback TCP proxy in front of a broker that breaks connections where a test says, or at random.

    with FaultProxy(("127.0.0.1", broker_port), seed=7, probability=0.03, max_faults=30) as proxy:
        BrokerAdapter(BY_ADDRESS, ByAddress(proxy.bootstrap, PLAINTEXT)).run(histories)
        proxy.faults   # Counter({"before-request": 9, "after-request": 11, "mid-response": 10})

Kafka frames are length-prefixed (a 4-byte big-endian size), and a broker answers each connection in
order, so the proxy reads whole request frames from the client and whole response frames from the
broker and knows which response answers which request.  Each request frame may draw a fault (a seeded
``random.Random``; ``probability`` per frame, at most ``max_faults`` in all), or take the next one
``plan``-ned for its API.  A fault ends the connection on both sides, in one of three ways:

- ``before-request``: the request was read from the client and nothing of it forwarded;
- ``after-request``: the request was forwarded, and its response is dropped when it comes back (so
  the broker certainly acted on it and the client certainly never hears);
- ``mid-response``: a prefix of the response frame is forwarded (at least one byte, never all of it).

``refuse(rule)`` plays a broker that cannot parse some request: every request frame ``rule(frame)``
accepts closes its connection before anything of it is forwarded, however often it is sent (counted
in ``refused``, not in ``faults``).

Half of the faults (seeded) close with an RST (``SO_LINGER`` 0) instead of a FIN, so the client sees
a reset as well as an EOF.  Once a connection has a fault coming, its later requests draw none.

The broker advertises its own address in Metadata and clients follow it to the partition leaders:
start the broker with a listener advertised at ``proxy.port`` (the target may be set after the
proxy is listening, for that reason).  The context manager always stops the threads and closes
every socket; ``sever()`` closes every open connection at once, without counting a fault.
Stdlib only: one thread accepts, two threads per connection copy frames.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
from collections import Counter, deque

BEFORE, AFTER, MID = "before-request", "after-request", "mid-response"
KINDS = (BEFORE, AFTER, MID)
API_KEYS = {
    "Produce": 0,
    "Fetch": 1,
    "ListOffsets": 2,
    "Metadata": 3,
    "ApiVersions": 18,
    "CreateTopics": 19,
    "DeleteTopics": 20,
    "DescribeConfigs": 32,
}
ACCEPT_POLL_S = 0.1  # how often the accepting thread looks at the stop flag
JOIN_S = 5.0


class FaultProxy:
    def __init__(
        self,
        target: tuple[str, int] | None = None,
        *,
        seed: int = 0,
        probability: float = 0.0,
        kinds: tuple[str, ...] = KINDS,
        max_faults: int | None = None,
        host: str = "127.0.0.1",
    ):
        assert set(kinds) <= set(KINDS), kinds
        self.target, self.probability, self.kinds, self.max_faults = target, probability, kinds, max_faults
        self.rng = random.Random(seed)
        self.faults: Counter = Counter()  # by kind
        self.resets = 0  # faults that closed with an RST rather than a FIN
        self.connections = 0  # accepted
        self.requests = 0  # request frames read from clients
        self.planned: deque = deque()  # [kind, api key or None, matches to skip], taken in order
        self.rule = None  # frame -> True: the request is refused (its connection closed)
        self.refused = 0  # request frames refused by the rule
        self.lock = threading.Lock()
        self.links: set[Link] = set()
        self.threads: list[threading.Thread] = []
        self.stopping = threading.Event()
        self.listener = socket.create_server((host, 0))
        self.listener.settimeout(ACCEPT_POLL_S)
        self.host, self.port = self.listener.getsockname()[:2]

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    # -- lifecycle
    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> FaultProxy:
        self.spawn(self.accept_loop, "faultproxy-accept")
        return self

    def stop(self) -> None:
        """Stop accepting, close every connection and socket, and wait for every thread."""
        self.stopping.set()
        self.sever()
        # by index, not a copy: the accepting thread (first) may still be spawning a connection's
        # threads, and those land at the end of the list before it exits
        i = 0
        while i < len(self.threads):
            if self.threads[i] is not threading.current_thread():
                self.threads[i].join(JOIN_S)
            i += 1
        self.listener.close()

    def alive_threads(self) -> list[str]:
        return [t.name for t in self.threads if t.is_alive()]

    def sever(self) -> int:
        """Close every open connection (not counted as a fault); how many there were."""
        with self.lock:
            links = list(self.links)
        for link in links:
            link.close()
        return len(links)

    def spawn(self, run, name: str) -> None:
        thread = threading.Thread(target=run, name=name, daemon=True)
        self.threads.append(thread)
        thread.start()

    # -- faults
    def plan(self, kind: str, api: str | None = None, skip: int = 0) -> None:
        """Break the connection of the next request (of ``api``, when given; after ``skip`` of them)
        the ``kind`` way."""
        assert kind in KINDS, kind
        with self.lock:
            self.planned.append([kind, None if api is None else API_KEYS[api], skip])

    def refuse(self, rule) -> None:
        """Close the connection of every request frame ``rule(frame)`` accepts (None: refuse nothing)."""
        with self.lock:
            self.rule = rule

    def refuses(self, frame: bytes) -> bool:
        with self.lock:
            refused = self.rule is not None and bool(self.rule(frame))
            self.refused += refused
            return refused

    def arm(self, probability: float) -> None:
        with self.lock:
            self.probability = probability

    def decide(self, api_key: int) -> tuple[str, bool, float] | None:
        """The fault this request frame gets, if any: (kind, close with RST, share of the response sent)."""
        with self.lock:
            self.requests += 1
            kind = self.take_planned(api_key)
            if kind is None and self.probability > 0 and not self.capped() and self.rng.random() < self.probability:
                kind = self.rng.choice(self.kinds)
            if kind is None:
                return None
            self.faults[kind] += 1
            reset = self.rng.random() < 0.5
            self.resets += reset
            return kind, reset, self.rng.random()

    def take_planned(self, api_key: int) -> str | None:
        for i, (kind, key, skip) in enumerate(self.planned):
            if key is None or key == api_key:
                if skip:
                    self.planned[i][2] -= 1
                    return None
                del self.planned[i]
                return kind
        return None

    def capped(self) -> bool:
        return self.max_faults is not None and sum(self.faults.values()) >= self.max_faults

    # -- connections
    def accept_loop(self) -> None:
        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.open_link(client)

    def open_link(self, client: socket.socket) -> None:
        client.settimeout(None)
        try:
            assert self.target is not None, "FaultProxy.target is not set"
            upstream = socket.create_connection(self.target)
        except (OSError, AssertionError):
            client.close()
            return
        for sock in (client, upstream):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        link = Link(self, client, upstream)
        with self.lock:
            if self.stopping.is_set():
                client.close()
                upstream.close()
                return
            self.connections += 1
            self.links.add(link)
        n = self.connections
        self.spawn(link.run(link.requests_loop), f"faultproxy-{n}-requests")
        self.spawn(link.run(link.responses_loop), f"faultproxy-{n}-responses")

    def forget(self, link: Link) -> None:
        with self.lock:
            self.links.discard(link)


class Link:
    """One client connection and its connection to the broker; request i is answered by response i."""

    def __init__(self, proxy: FaultProxy, client: socket.socket, upstream: socket.socket):
        self.proxy, self.client, self.upstream = proxy, client, upstream
        self.forwarded = 0  # request frames sent to the broker
        self.answered = 0  # response frames read from the broker
        self.doomed: tuple[int, str, bool, float] | None = None  # (response index, kind, reset, share)
        self.lock = threading.Lock()
        self.closed = False
        self.loops = 2  # loop threads still using the sockets

    def run(self, loop):
        """``loop``, then ``close`` and ``leave``, however it ends."""

        def body() -> None:
            try:
                loop()
            finally:
                self.close()
                self.leave()

        return body

    def requests_loop(self) -> None:
        """Client to broker, a frame at a time, each frame maybe the one that breaks the connection."""
        while True:
            frame = read_frame(self.client)
            if frame is None:
                return self.close()
            if self.proxy.refuses(frame):
                return self.close()
            fault = self.proxy.decide(api_key(frame)) if self.doomed is None else None
            if fault is not None and fault[0] == BEFORE:
                return self.close(reset=fault[1])
            with self.lock:
                if fault is not None:
                    self.doomed = (self.forwarded, *fault)
                self.forwarded += 1
            if not send(self.upstream, frame):
                return self.close()

    def responses_loop(self) -> None:
        """Broker to client; the answer to a doomed request is dropped, or cut short, and all closes."""
        while True:
            frame = read_frame(self.upstream)
            if frame is None:
                return self.close()
            with self.lock:
                index, self.answered = self.answered, self.answered + 1
                doomed = self.doomed if self.doomed is not None and self.doomed[0] == index else None
            if doomed is not None:
                _, kind, reset, share = doomed
                if kind == MID:
                    send(self.client, frame[: 1 + int(share * (len(frame) - 1))])  # at least 1 byte, never all
                return self.close(reset=reset)
            if not send(self.client, frame):
                return self.close()

    def close(self, reset: bool = False) -> None:
        """End the connection on both sides.  The sockets are only shut down here, which wakes the
        other thread's blocking recv; the last loop to leave closes them (``leave``), so no thread
        ever reads a descriptor number the process has already handed to another socket."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
        for sock in (self.client, self.upstream):
            try:
                if reset:  # the final close() then sends an RST, not a FIN
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                # SHUT_RD sends nothing, so a reset stays a reset
                sock.shutdown(socket.SHUT_RD if reset else socket.SHUT_RDWR)
            except OSError:
                pass
        self.proxy.forget(self)

    def leave(self) -> None:
        """A loop thread is done with the sockets; the last one out closes them."""
        with self.lock:
            self.loops -= 1
            last = self.loops == 0
        if last:
            self.client.close()
            self.upstream.close()


def read_exactly(sock: socket.socket, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        try:
            chunk = sock.recv(min(left, 1 << 20))
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(sock: socket.socket) -> bytes | None:
    """One whole Kafka frame, its 4-byte size included; None at EOF or on any error."""
    head = read_exactly(sock, 4)
    if head is None:
        return None
    body = read_exactly(sock, struct.unpack(">i", head)[0])
    return None if body is None else head + body


def api_key(frame: bytes) -> int:
    return struct.unpack_from(">h", frame, 4)[0] if len(frame) >= 6 else -1


def api_version(frame: bytes) -> int:
    return struct.unpack_from(">h", frame, 6)[0] if len(frame) >= 8 else -1


def send(sock: socket.socket, data: bytes) -> bool:
    try:
        sock.sendall(data)
        return True
    except OSError:
        return False
