"""One non-blocking, pipelined connection to a broker, and what happens when it breaks.

Requests are written in order and Kafka answers each connection in order, so responses are matched
to requests by position (and checked by correlation id).  Every request remembers whether any of
its bytes reached the socket: when the connection breaks (EPIPE, reset, EOF, a broker reaping idle
connections, a garbled frame), each waiting request is told whether the broker *may* have seen it
(``lost(maybe_delivered, reason)``) and the connection is closed for good.  Whoever owns it opens a
new one; nothing is ever sent again on a broken connection.

A response that cannot be parsed (a partition the broker did not report, a truncated field) is not
a broken connection: its request gets ``Broken(reason)`` as its answer and the connection goes on.
"""

from __future__ import annotations

import itertools
import select
import ssl
import struct
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from .messages import Call
from .records import WireError
from .security import Security, open_socket

CLIENT_ID = "ktc-pipeline"
READ_BYTES = 1 << 20


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Broken:
    """An answer that could not be read: the broker's words, or what was wrong with them."""

    reason: str


@dataclass
class Request:
    """A request on a connection: its bytes, how many of them went out, and whom to tell."""

    correlation: int
    call: Call
    frame: bytes
    done: Callable[[object, int], None]  # (parsed answer or Broken, received_ms)
    lost: Callable[[bool, str], None]  # (maybe delivered, reason)
    written: int = 0
    queued: float = field(default_factory=time.monotonic)


class Connection:
    """A socket with requests pipelined on it; ``faulted`` once it broke (then it is never used again)."""

    def __init__(self, address: tuple[str, int], timeout_s: float, security: Security | None = None):
        self.sock = open_socket(address, timeout_s, security)
        self.sock.setblocking(False)
        self.address = address
        self.inbox = bytearray()
        self.unwritten: deque[Request] = deque()  # not yet (fully) written, in order
        self.waiting: deque[Request] = deque()  # written or being written, awaiting answers, in order
        self.correlation = itertools.count(1)
        self.faulted: str | None = None
        self.last_used = time.monotonic()

    @property
    def name(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"

    def send(self, call: Call, done: Callable, lost: Callable) -> None:
        correlation = next(self.correlation)
        request = Request(correlation, call, call.request(correlation, CLIENT_ID), done, lost)
        self.unwritten.append(request)
        self.waiting.append(request)
        self.flush()

    @property
    def wants_write(self) -> bool:
        return bool(self.unwritten) and self.faulted is None

    def flush(self) -> None:
        """Write as much as the socket takes now; a socket fault fails the connection."""
        try:
            while self.unwritten:
                request = self.unwritten[0]
                request.written += self.sock.send(request.frame[request.written :])
                if request.written < len(request.frame):
                    return
                self.unwritten.popleft()
        except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            return
        except OSError as error:
            self.fail(f"connection to {self.name} broke while sending ({error.__class__.__name__}: {error})")
        finally:
            self.last_used = time.monotonic()

    def receive(self) -> list[tuple[Callable, object, int]]:
        """(done, answer, received_ms) for every response the bytes now in the socket complete."""
        try:
            data = self.read()
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return []
        except OSError as error:
            self.fail(f"connection to {self.name} broke while receiving ({error.__class__.__name__}: {error})")
            return []
        received = now_ms()  # after the read: no answer it completes was sent later than this
        if not data:
            self.fail(f"{self.name} closed the connection")
            return []
        self.inbox += data
        self.last_used = time.monotonic()
        return self.frames(received)

    def read(self) -> bytes:
        data = self.sock.recv(READ_BYTES)
        while data and isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
            data += self.sock.recv(self.sock.pending())
        return data

    def frames(self, received: int) -> list[tuple[Callable, object, int]]:
        out = []
        while len(self.inbox) >= 4 and self.faulted is None:
            size = struct.unpack_from(">i", self.inbox)[0]
            if len(self.inbox) < 4 + size:
                break
            data = bytes(self.inbox[4 : 4 + size])
            del self.inbox[: 4 + size]
            answered = self.answer(data)
            if answered is not None:
                out.append((answered[0], answered[1], received))
        return out

    def answer(self, data: bytes) -> tuple[Callable, object] | None:
        if not self.waiting:
            self.fail(f"{self.name} sent a response nobody asked for")
            return None
        request = self.waiting.popleft()
        try:
            response = request.call.response(data)
        except Exception as error:  # a frame we cannot even decode: the stream is out of step
            self.waiting.appendleft(request)
            self.fail(f"undecodable {request.call.api} response from {self.name} ({type(error).__name__}: {error})")
            return None
        if response.header.correlation_id != request.correlation:
            self.waiting.appendleft(request)
            self.fail(
                f"{self.name} answered correlation id {response.header.correlation_id}, expected {request.correlation}"
            )
            return None
        return request.done, parsed(request.call, response)

    def fail(self, reason: str) -> None:
        """Close for good and tell every waiting request whether the broker may have seen it."""
        if self.faulted is not None:
            return
        self.faulted = reason
        waiting, self.waiting, self.unwritten = list(self.waiting), deque(), deque()
        self.close()
        for request in waiting:
            request.lost(request.written > 0, reason)

    def stale(self, idle_s: float) -> bool:
        """Whether an idle connection should not be trusted with a request: the broker closed it (EOF
        waiting to be read) or it sat idle longer than ``idle_s`` (brokers reap idle connections)."""
        if self.faulted is not None:
            return True
        if self.waiting:
            return False
        if time.monotonic() - self.last_used > idle_s:
            return True
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)  # nothing was asked, so anything to read is a close (or garbage)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def parsed(call: Call, response) -> object:
    """The call's parsed answer, or Broken with what was wrong (a partition it did not report, ...)."""
    try:
        return call.parse(response)
    except WireError as error:
        return Broken(f"{call.api}: {error}")
    except (KeyError, IndexError, AttributeError, TypeError, ValueError) as error:
        return Broken(f"{call.api} answer could not be read ({type(error).__name__}: {error})")
