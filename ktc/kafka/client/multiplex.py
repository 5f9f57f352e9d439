"""Many operations in flight over connections that come back: slots, retries, one event loop.

An operation is a generator of ``Call`` / ``Pause`` (messages.py) run on one ``Slot`` (a connection
to one broker that is reopened, with bounded backoff, after it breaks); a call that names another broker
(``Call.to``: a partition's leader, routing.py) goes on that broker's admin slot.  When a connection breaks
under a request, the request is sent again on the new connection if the broker cannot have seen it
or repeating it is harmless (``Call.retry_safe``); otherwise the operation ends ``Lost``: its
request may or may not have been applied.  An answer that cannot be read ends it ``Broken``.  Either
way the caller decides what that means; nothing here raises past the event loop but a broker that
stays unreachable for ``reconnect_s``.
"""

from __future__ import annotations

import heapq
import itertools
import select
import time
from collections import Counter
from collections.abc import Callable

from . import combine, messages
from .connection import Broken, Connection, now_ms, parsed
from .records import WireError
from .security import AuthenticationError, Security

MAX_RESENDS = 5  # of one request, after its connection broke
COMBINED_DEPTH = 64  # with combining on, operations a slot holds per request it would have in flight


class Lost:
    """An operation whose request may have reached the broker before its connection broke."""

    def __init__(self, reason: str):
        self.reason = reason


# ---- connections that come back ---------------------------------------------------------------


class Slot:
    """A connection to one broker that is reopened (with bounded backoff) after it breaks."""

    def __init__(
        self, address: tuple[str, int], timeout_s: float, security: Security | None, reconnect_s: float, idle_s: float
    ):
        self.address, self.timeout_s, self.security = address, timeout_s, security
        self.reconnect_s, self.idle_s = reconnect_s, idle_s
        self.conn: Connection | None = None
        self.busy = 0  # operations holding this slot
        self.reopened = 0

    def ready(self) -> Connection:
        """The open connection, or a new one when it broke or the broker dropped it while idle."""
        if self.conn is not None and not self.conn.stale(self.idle_s):
            return self.conn
        if self.conn is not None:
            self.conn.fail("closed by ktc: idle, or dropped by the broker")
            self.reopened += 1
        self.conn = self.open()
        return self.conn

    def open(self) -> Connection:
        deadline, pause = time.monotonic() + self.reconnect_s, 0.05
        while True:
            try:
                return Connection(self.address, self.timeout_s, self.security)
            except AuthenticationError:
                raise  # a refused login does not get better by retrying
            except WireError as error:
                if time.monotonic() + pause > deadline:
                    raise WireError(f"{error}; still unreachable after {self.reconnect_s:.0f} s") from None
            time.sleep(pause)
            pause = min(2.0, pause * 2)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


class Exchange:
    """One operation's requests in order on one slot: a generator of Call / Pause (messages.py)."""

    def __init__(self, pipeline: Multiplexer, slot: Slot, steps, done: Callable):
        self.pipeline, self.slot, self.steps, self.done = pipeline, slot, steps, done
        self.call: messages.Call | None = None
        self.resends = 0

    def advance(self, answer=None, received: int | None = None) -> None:
        try:
            step = (
                self.steps.throw(BrokenAnswer(answer.reason)) if isinstance(answer, Broken) else self.steps.send(answer)
            )
        except StopIteration as finished:
            return self.finish(finished.value, received)
        except BrokenAnswer as error:
            return self.finish(Broken(str(error)), received)
        except (KeyError, IndexError) as error:
            return self.finish(Broken(f"the broker's answer lacks {error}"), received)
        except WireError as error:  # an operation that gave up (a partition that never became ready)
            return self.finish(Broken(str(error)), received)
        if isinstance(step, messages.Pause):
            self.pipeline.later(step.seconds, lambda: self.advance(None, received), *self.where())
        else:
            self.call = step
            self.transmit()

    def where(self) -> tuple[str, str]:
        """The innermost step generator this operation waits in, with its line, and what it waits for when that
        generator names it in a local ``awaited`` (retention.py ``until``), else "" (for a run that does not return)."""
        steps = self.steps
        while getattr(steps, "gi_yieldfrom", None) is not None:
            steps = steps.gi_yieldfrom
        frame, code = getattr(steps, "gi_frame", None), getattr(steps, "gi_code", None)
        if frame is None or code is None:
            return type(steps).__name__, ""
        awaited = frame.f_locals.get("awaited")
        return f"{code.co_name} ({code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno})", (
            awaited if isinstance(awaited, str) else ""
        )

    @property
    def current(self) -> messages.Call:
        """The request in flight: an exchange transmits only once its generator gave a first Call."""
        assert self.call is not None, "no request yet"
        return self.call

    def transmit(self) -> None:
        slot = self.pipeline.slot_for(self.current.to, self.slot)
        if slot is not self.slot or not self.pipeline.gather(self):  # a call for another broker goes alone
            slot.ready().send(self.current, self.answered, self.lost)

    def answered(self, answer, received: int) -> None:
        self.resends = 0
        self.advance(answer, received)

    def lost(self, maybe_delivered: bool, reason: str) -> None:
        """The connection broke under this request (told from inside a send, a read or a close):
        decide later, from the event loop, so no caller is re-entered mid-loop."""
        self.pipeline.later(0.0, lambda: self.recover(maybe_delivered, reason))

    def recover(self, maybe_delivered: bool, reason: str) -> None:
        """Send the request again where that is harmless; otherwise the operation ends ``Lost``."""
        if (maybe_delivered and not self.current.retry_safe) or self.resends >= MAX_RESENDS:
            what = "may or may not have been applied" if maybe_delivered else "could not be sent"
            return self.finish(Lost(f"{reason}; {self.current.api} {what}"), now_ms())
        self.resends += 1
        self.pipeline.resent += 1
        self.pipeline.later(0.0, self.transmit)

    def finish(self, value, received: int | None) -> None:
        self.slot.busy -= 1
        self.done(value, received)


class BrokenAnswer(Exception):
    """Thrown into an operation's generator when its answer could not be read."""


class Multiplexer:
    """Slots to the brokers (one admin slot and ``connections`` operation slots each, at most ``depth``
    operations waiting on each) and their event loop: sockets and timers, served until told to stop."""

    def __init__(
        self,
        bootstrap: tuple[str, int],
        connections: int = 4,
        depth: int = 2,
        timeout_s: float = 30.0,
        security: Security | None = None,
        reconnect_s: float = 30.0,
        idle_s: float = 240.0,
    ):
        self.bootstrap = bootstrap
        self.connections, self.depth, self.timeout_s = max(1, connections), depth, timeout_s
        self.slot_options = (timeout_s, security, reconnect_s, idle_s)
        self.timers: list = []  # heap of (due, sequence, callback, what it is and what it waits for, in words)
        self.fired: Counter[str] = Counter()  # timers fired so far, by what they were
        self._sequence = itertools.count()
        self.admins: dict[tuple[str, int], Slot] = {}
        self.pools: dict[tuple[str, int], list[Slot]] = {}
        self.resent = 0  # requests sent again after their connection broke
        self.combining = False  # record requests of one turn go out together (combine.py); set by the owner
        self.gathered: dict[tuple, list[Exchange]] = {}  # (address, combine.key) -> exchanges to send together

    def admin(self, address: tuple[str, int] | None = None) -> Slot:
        address = address or self.bootstrap
        if address not in self.admins:
            self.admins[address] = Slot(address, *self.slot_options)
        return self.admins[address]

    def slot_for(self, to: tuple[str, int] | None, slot: Slot) -> Slot:
        """Where a call goes: ``slot``, unless the call names another broker (then that broker's admin slot)."""
        return slot if to is None or to == slot.address else self.admin(to)

    def pool(self, address: tuple[str, int]) -> list[Slot]:
        if address not in self.pools:
            self.pools[address] = [Slot(address, *self.slot_options) for _ in range(self.connections)]
        return self.pools[address]

    @property
    def slots(self) -> list[Slot]:
        return [*self.admins.values(), *(s for pool in self.pools.values() for s in pool)]

    def free(self, address: tuple[str, int]) -> Slot | None:
        """The least busy operation slot to ``address``, if it has room for another operation (when requests
        are combined, room for as many as go in one request: they share one request, not the connection)."""
        slot = min(self.pool(address), key=lambda s: s.busy)
        return slot if slot.busy < self.depth * (COMBINED_DEPTH if self.combining else 1) else None

    def gather(self, exchange: Exchange) -> bool:
        """Keep an operation slot's record request for this turn's combined requests (``send_gathered``)."""
        call = exchange.current
        if not self.combining or exchange.slot in self.admins.values() or not combine.combinable(call):
            return False
        if not self.gathered:
            self.later(0.0, self.send_gathered)
        self.gathered.setdefault((exchange.slot.address, combine.key(call)), []).append(exchange)
        return True

    def send_gathered(self) -> None:
        """Each group of gathered requests as one request, spread over the address's connections."""
        gathered, self.gathered = self.gathered, {}
        for (address, _key), exchanges in gathered.items():
            pool = self.pool(address)
            for n, group in enumerate(combine.groups([e.current for e in exchanges])):
                members = [exchanges[i] for i in group]
                if len(members) == 1:
                    members[0].slot.ready().send(members[0].current, members[0].answered, members[0].lost)
                else:
                    self.send_together(pool[n % len(pool)], members)

    def send_together(self, slot: Slot, members: list[Exchange]) -> None:
        def answered(response, received: int) -> None:
            if isinstance(response, Broken):
                views: list = [response] * len(members)
            else:
                views = combine.parts([m.current for m in members], response)
            for member, view in zip(members, views, strict=True):
                member.answered(view if isinstance(view, Broken) else parsed(member.current, view), received)

        def lost(maybe_delivered: bool, reason: str) -> None:
            for member in members:
                member.lost(maybe_delivered, reason)

        slot.ready().send(combine.merged([m.current for m in members]), answered, lost)

    def start(self, steps, slot: Slot, done: Callable) -> None:
        """Run an operation on ``slot``; ``done(result, received_ms)`` when its last answer is in."""
        slot.busy += 1
        Exchange(self, slot, steps, done).advance()

    def call(self, call: messages.Call, done: Callable, address: tuple[str, int] | None = None) -> None:
        """One admin request; ``done(answer | Broken | Lost, received_ms)``."""
        self.start(single(call), self.admin(address), done)

    def later(self, seconds: float, callback: Callable, what: str | None = None, awaited: str = "") -> None:
        what = what or getattr(callback, "__qualname__", type(callback).__name__)
        heapq.heappush(self.timers, (time.monotonic() + seconds, next(self._sequence), callback, what, awaited))

    def scheduled(self, most: int = 3) -> str:
        """The timers due next and those fired most often so far, in words (for a run that does not return):
        a run that waits with no request out waits on one of them, and a loop of polls shows in the counts."""
        now = time.monotonic()
        next_due = heapq.nsmallest(most, self.timers)
        due = [
            f"{what}{' for ' + awaited if awaited else ''} in {max(0.0, at - now):.1f} s"
            for at, _n, _callback, what, awaited in next_due
        ]
        fired = [f"{what} x{times}" for what, times in self.fired.most_common(most)]
        return (
            f"{len(self.timers)} timers scheduled{': ' + ', '.join(due) if due else ''}"
            f"; fired most: {', '.join(fired) if fired else 'none'}"
        )

    def wait(self, until: Callable[[], bool]) -> None:
        """Serve sockets and timers until ``until()`` holds."""
        quiet_since = time.monotonic()
        while not until():
            if self.poll():
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > self.timeout_s:
                self.expire()
                quiet_since = time.monotonic()

    def expire(self) -> None:
        """Nothing answered for timeout_s: every connection with requests waiting is broken."""
        for slot in self.slots:
            if slot.conn is not None and slot.conn.waiting:
                slot.conn.fail(f"no answer from {slot.conn.name} within {self.timeout_s:.0f} s")

    def unanswered(self, most: int = 3) -> str:
        """The oldest requests still waiting for an answer, in words (for a run that did not return)."""
        now = time.monotonic()
        waiting = sorted((r.queued, r.call.api, c.name) for c in self.open_connections() for r in c.waiting)
        words = [f"{api} to {name} for {now - queued:.0f} s" for queued, api, name in waiting[:most]]
        more = f" and {len(waiting) - most} more" if len(waiting) > most else ""
        return f"waiting on {', '.join(words)}{more}" if words else "no request waiting for an answer"

    def open_connections(self) -> list[Connection]:
        return [s.conn for s in self.slots if s.conn is not None and s.conn.faulted is None]

    def poll(self) -> bool:
        """One select() round; whether anything happened."""
        conns = self.open_connections()
        readers = [c for c in conns if c.waiting]
        writers = [c for c in conns if c.wants_write]
        if not readers and not writers and not self.timers:
            raise WireError("pipeline stalled: nothing in flight, nothing scheduled")
        timeout = min(1.0, max(0.0, self.timers[0][0] - time.monotonic())) if self.timers else 1.0
        readable, writable, _ = select.select([c.sock for c in readers], [c.sock for c in writers], [], timeout)
        by_socket = {c.sock: c for c in conns}
        for sock in writable:
            by_socket[sock].flush()
        for sock in readable:
            for done, answer, received in by_socket[sock].receive():
                done(answer, received)
        return bool(readable or writable) | self.fire_timers()

    def fire_timers(self) -> bool:
        fired = False
        while self.timers and self.timers[0][0] <= time.monotonic():
            _due, _n, callback, what, _awaited = heapq.heappop(self.timers)
            self.fired[what] += 1
            callback()
            fired = True
        return fired

    def idle(self) -> bool:
        return not self.timers and not any(c.waiting for c in self.open_connections())

    def close(self) -> None:
        for slot in self.slots:
            slot.close()


def single(call: messages.Call):
    """A one-request operation (a generator, as Exchange runs them)."""
    return (yield call)
