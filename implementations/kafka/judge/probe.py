"""What a broker can answer, found once per run on a scratch topic.

A Kafka-compatible broker may advertise an API version it cannot parse, or close the connection on
a request it does not understand (tansu closes it on a ListOffsets target it does not know).  Sent
during a run, such a request would be resent and lost over and over, and every history holding it
would end ``unknown``.  So, before the first history, ktc asks each question a run needs once, each
on a fresh connection (a broker that closed one has answered for it), on a topic of its own:

- ListOffsets LATEST at the newest version both speak, then the next lower one while the broker
  closes the connection (and says so);
- each special ListOffsets target at that version (-3 MAX_TIMESTAMP, -4 EARLIEST_LOCAL,
  -5 LATEST_TIERED, -6 EARLIEST_PENDING_UPLOAD, and -7 for a negative target with no meaning); a target
  whose version the broker does not advertise but ktc sends (-6 needs v11) cannot be asked as the model asks it;
- DescribeConfigs of a topic for named keys (and, when that closes, for all keys);
- Fetch with max_wait_ms 0 (and, when that answers without the partition, with a short wait).

On a cluster every question goes to the scratch partition's leader.  The outcome (``Probed``) steers the
pipeline (what it must not send, how it fetches and describes) and names the clauses that rest on what the
broker cannot answer (judge/capabilities.py), with the behaviour observed as the reason.  Nothing here
raises: a question that cannot be asked is a note.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ktc.kafka.client import admin, messages, routing, wire
from ktc.reference.types import Batch, ListOffsets, Record

# A special ListOffsets target and the request version that introduced it (KIP-734, KIP-405, KIP-1005,
# KIP-1023); -7 stands for every negative target without a meaning (answered UNSUPPORTED_VERSION by Kafka 3.9+).
TARGETS = {-3: 7, -4: 8, -5: 9, -6: 11, -7: 1}
TARGET_NAMES = {
    -3: "MAX_TIMESTAMP",
    -4: "EARLIEST_LOCAL",
    -5: "LATEST_TIERED",
    -6: "EARLIEST_PENDING_UPLOAD",
    -7: "an unknown negative target",
}
FETCH_WAIT_MS = 10  # with min_bytes 0 Kafka answers at once whatever the wait; some brokers need one (tansu
# 0.6.0 waits it out on every Fetch: 100 ms made its run 83 s, 10 ms 17 s, with the same 63 rows)


@dataclass
class Probed:
    """What the broker answered when asked once; ``notes`` say it in words."""

    advertised: dict[str, int] = field(default_factory=dict)  # api -> max version advertised
    list_offsets_version: int = wire.LIST_OFFSETS_MAX  # the newest it answers (LIST_OFFSETS_MAX: no limit seen)
    refused_versions: str | None = None  # ListOffsets versions above list_offsets_version: what they did
    refused_targets: dict[int, str] = field(default_factory=dict)  # target (TARGETS key) -> what it did
    fetch_wait_ms: int = 0
    describe_keys: bool = True
    notes: list[str] = field(default_factory=list)

    def refuses(self, op) -> str | None:
        """Why ``op`` is not sent, or None: a ListOffsets the broker was seen not to answer."""
        if not isinstance(op, ListOffsets):
            return None
        if op.version is not None and op.version > self.list_offsets_version and self.refused_versions:
            return f"ListOffsets v{op.version}: {self.refused_versions}"
        key = target_key(op.target)
        return self.refused_targets.get(key) if key is not None else None

    def summary(self) -> str:
        return "; ".join(self.notes) or "every question answered"


def target_key(target: int) -> int | None:
    """The TARGETS key a ListOffsets target falls under (None: -1, -2 and timestamps)."""
    if target >= -2:
        return None
    return target if target in TARGETS else -7


def what_failed(error: Exception) -> str:
    """A failure in a few words: 'connection closed', or the error itself."""
    text = str(error)
    if isinstance(error, wire.WireError) and "closed the connection" in text:
        return "connection closed"
    if isinstance(error, OSError):
        return f"connection broken ({type(error).__name__})"
    return f"{type(error).__name__}: {text}"


class Asker:
    """Each question on a fresh connection: a broker that closed one has said all it will on it.  Questions go
    to ``to`` once it is set (the scratch partition's leader, on a cluster not the broker ``connect`` reaches)."""

    def __init__(self, connect: Callable[[], wire.Client]):
        self.connect = connect
        self.to: tuple[str, int] | None = None

    def ask(self, call: messages.Call):
        """(parsed answer, None) or (None, what failed)."""
        try:
            with self.connect() as client:
                return client.call(routing.addressed(call, self.to)), None
        except Exception as error:  # a broker that cannot answer is evidence, never a crash
            return None, what_failed(error)

    def perform(self, steps):
        try:
            with self.connect() as client:
                return client.perform(steps), None
        except Exception as error:
            return None, what_failed(error)


def probe(connect: Callable[[], wire.Client], topic: str, advertised: dict[str, int]) -> Probed:
    """Ask the broker behind ``connect`` everything a run needs, once, on the scratch ``topic``."""
    found, asker, leaders = Probed(advertised=dict(advertised)), Asker(connect), routing.Leaders()
    created, failed = asker.perform(routing.create_and_wait([admin.NewTopic(topic)], 10.0, leaders=leaders))
    if failed or created[topic][0] != 0:
        found.notes.append(f"no scratch topic to probe on ({failed or f'CreateTopics error {created[topic][0]}'})")
        return found
    asker.to = leaders.address((topic, 0))
    try:
        now = wire.now_ms()
        _, failed = asker.ask(messages.produce(topic, wire.encode_batch(Batch((Record(now, b"k", b"v"),)))))
        if failed:
            found.notes.append(f"Produce: {failed}")
        probe_list_offsets(asker, topic, found)
        probe_describe(asker, topic, found)
        probe_fetch(asker, topic, found)
    finally:
        asker.ask(admin.delete_topics([topic]))
    return found


def probe_list_offsets(asker: Asker, topic: str, found: Probed) -> None:
    """The newest ListOffsets version the broker answers, then each special target at it."""
    top = min(found.advertised.get("ListOffsets", messages.VERSIONS["ListOffsets"]), wire.LIST_OFFSETS_MAX)
    version, closed = top, []
    while version >= 1:
        _, failed = asker.ask(messages.list_offsets([(topic, 0, wire.LATEST_TIMESTAMP)], 0, version))
        if not failed:
            break
        closed.append(f"v{version}: {failed}")
        version -= 1
    if version < 1:
        found.notes.append(f"ListOffsets LATEST answered at no version ({', '.join(closed)})")
        return
    found.list_offsets_version = version
    if closed:
        found.refused_versions = f"advertised, but {', '.join(closed)} (probed)"
        found.notes.append(f"ListOffsets {', '.join(closed)}; asked at v{version}, the next lower")
    for target, since in TARGETS.items():
        found.refused_targets.update(refused_target(asker, topic, found, target, since, top))


def refused_target(asker: Asker, topic: str, found: Probed, target: int, since: int, top: int) -> dict[int, str]:
    """{target: what the broker did} when it cannot answer ``target``; {} when it can (or never claimed to)."""
    name = TARGET_NAMES[target]
    if top < since <= wire.LIST_OFFSETS_MAX:  # the model asks it at the version that has it: cannot be sent
        return {target: f"{name} needs ListOffsets v{since}; the broker answers v{top} at most"}
    if top < since:
        return {}  # not advertised: Kafka's own rule for a target below its version applies, and is judged
    if found.list_offsets_version < since:
        return {
            target: f"{name} needs ListOffsets v{since}, which the broker advertises but closes the "
            f"connection on (probed on a scratch topic)"
        }
    _, failed = asker.ask(messages.list_offsets([(topic, 0, target)], 0, found.list_offsets_version))
    if not failed:
        return {}
    found.notes.append(f"ListOffsets {name} ({target}) at v{found.list_offsets_version}: {failed}")
    return {
        target: f"ListOffsets {name} ({target}) at v{found.list_offsets_version}: {failed} (probed on a scratch topic)"
    }


def probe_describe(asker: Asker, topic: str, found: Probed) -> None:
    """DescribeConfigs of a topic for named keys; for all keys when the broker cannot parse named ones."""
    _, failed = asker.ask(admin.describe_topics_configs([(topic, ["message.timestamp.type"])]))
    if not failed:
        return
    _, again = asker.ask(admin.describe_topics_configs([(topic, None)]))
    found.describe_keys = again is not None
    found.notes.append(
        f"DescribeConfigs(topic) with configuration_keys: {failed}; "
        + ("asked for all keys instead" if again is None else f"without keys too: {again}")
    )


def probe_fetch(asker: Asker, topic: str, found: Probed) -> None:
    """Fetch with max_wait_ms 0; a broker answering that without the partition gets a short wait."""
    _, failed = asker.ask(messages.fetch(topic))
    if not failed:
        return
    _, again = asker.ask(messages.fetch(topic, max_wait_ms=FETCH_WAIT_MS))
    if again is None:
        found.fetch_wait_ms = FETCH_WAIT_MS
    found.notes.append(
        f"Fetch with max_wait_ms 0: {failed}; "
        + (
            f"asked with max_wait_ms {FETCH_WAIT_MS} (min_bytes 0) instead"
            if again is None
            else f"with max_wait_ms {FETCH_WAIT_MS} too: {again}"
        )
    )
