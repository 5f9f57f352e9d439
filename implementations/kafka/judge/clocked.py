"""Histories on a broker whose wall clock ktc sets (processes/clock.py).

Histories whose clocks agree run together, as on any broker, with the broker's clock frozen at one
instant: every operation of theirs is judged at that instant, not over an interval.  A history that
moves its leader's clock (``Advance``, ``StepClock`` of broker 0, no ``ElectLeader``) needs the
broker's clock to itself: it runs alone, and the pipeline sets the clock before each of its
operations, so its time jumps happen on the broker (segments roll, bounds move) as in the model.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from ktc.kafka.processes import clock_shim
from ktc.kafka.processes.broker import BrokerError
from ktc.kafka.processes.clock import ClockError, ControlledClock, HostClock
from ktc.reference.types import (
    Advance,
    Batch,
    CreateTopic,
    ElectLeader,
    History,
    Record,
    StepClock,
    TimestampType,
    TopicConfig,
)

from . import lockstep

ECHO_PATIENCE_S, ECHO_RETRY_S = 30.0, 0.05


# Broker settings a frozen wall clock cannot live with.  connections.max.idle.ms: once the broker's
# own controller channel is reaped, its NetworkClient waits out a reconnect backoff measured on the
# wall clock, which never passes while the clock stands still (measured on 3.9.2 at 1000 ms: the
# run's CreateTopics were never forwarded and it hung).
FROZEN_CLOCK_CONFLICTS = ("connections.max.idle.ms",)


def choose_clock(mode: str, broker_config: Mapping[str, object] = ()) -> tuple[ControlledClock | HostClock, str | None]:
    """The clock for a broker ktc starts, and why it is the host's when it is."""
    if mode == "host":
        return HostClock(), "KTC_KAFKA_CLOCK=host"  # --kafka-clock host, or its default
    conflict = next((key for key in FROZEN_CLOCK_CONFLICTS if key in dict(broker_config)), None)
    if conflict is not None:
        return HostClock(), (
            f"{conflict} is set: a broker on a frozen clock cannot reconnect its own controller "
            "channel once it is reaped"
        )
    try:
        library = clock_shim.build()
    except clock_shim.ShimError as error:
        return HostClock(), str(error)
    return ControlledClock(library), None


class Echo:
    """The broker's now as it echoes it: the LogAppendTime of one record on a topic of ktc's own."""

    def __init__(self, client, namer):
        config = TopicConfig(timestamp_type=TimestampType.LOG_APPEND_TIME)
        self.client, self.topic = client, namer.names(History("kip", (CreateTopic("clock", config),)))["clock"]
        code, message = client.create_topic(self.topic, {"message.timestamp.type": "LogAppendTime"})
        if code != 0:
            raise BrokerError(f"could not create the clock-echo topic {self.topic}: error {code} {message or ''}")

    def __call__(self, patience_s: float = ECHO_PATIENCE_S) -> int:
        """The LogAppendTime of a fresh record, asking again while the broker answers with an error (a
        partition not yet led, a connection reaped while idle) until ``patience_s`` has passed."""
        deadline = time.monotonic() + patience_s
        while True:
            out = self.client.produce(self.topic, Batch((Record(0),)))
            if out.error_code == 0:
                return out.log_append_time
            if time.monotonic() > deadline:
                raise ClockError(
                    f"the clock-echo topic {self.topic} answered produce with error {out.error_code} "
                    f"({out.error_message or 'no message'}) for {patience_s:.0f} s"
                )
            time.sleep(ECHO_RETRY_S)


def moves_its_clock(history: History) -> bool:
    """Whether a single broker following the history's broker 0 would see its clock move."""
    if any(isinstance(op, ElectLeader) for op in history.ops):
        return False  # the leader changes: one broker cannot be both (see --impl kafka-cluster)
    return any(
        (isinstance(op, Advance) and op.ms) or (isinstance(op, StepClock) and op.broker == 0 and op.delta_ms)
        for op in history.ops
    )


def split(histories: Sequence[History]) -> tuple[list[int], list[int]]:
    """Indexes of the histories that can share a frozen clock, and of those that need it alone."""
    moves = [moves_its_clock(h) for h in histories]
    return [i for i, m in enumerate(moves) if not m], [i for i, m in enumerate(moves) if m]


def run(pipeline, histories: Sequence[History], chunk: int) -> list:
    """Every history on ``pipeline`` (whose ``clock`` is a ControlledClock), traces in input order: those
    whose clock stands still together, those whose clock only moves forward in lockstep (lockstep.py),
    a chunk at a time, and each that steps back alone."""
    together, moving = split(histories)
    steps_back = {i: not lockstep.forward_only(histories[i]) for i in moving}
    forward, alone = [i for i in moving if not steps_back[i]], [i for i in moving if steps_back[i]]
    traces = {}
    pipeline.clock.resume()
    traces.update(zip(together, pipeline.run([histories[i] for i in together], chunk) if together else ()))
    for part in (forward[start : start + chunk] for start in range(0, len(forward), chunk)):
        pipeline.clock.resume()
        traces.update(zip(part, lockstep.run(pipeline, [histories[i] for i in part])))
    pipeline.drive = True
    try:
        for i in alone:
            pipeline.clock.resume()
            traces[i] = pipeline.run([histories[i]], 1)[0]
    finally:
        pipeline.drive = False
    return [traces[i] for i in range(len(histories))]
