"""A batch's leading CreateTopic operations on a pipeline (pipeline.py): create, wait until ready, release."""

from __future__ import annotations

import time
from collections.abc import Sequence

from ktc.kafka.client import admin, messages
from ktc.kafka.client.multiplex import Lost

from .observe import Cut

POLL_S = 0.01  # between readiness polls after CreateTopics


def ready_wait_s(partitions: int, base_s: float) -> float:
    """How long a batch's partitions may take to answer: scales with their number."""
    return base_s + 0.05 * partitions


class Creation:
    """A batch's leading CreateTopic operations: one CreateTopics request, then Metadata until every
    partition has a leader, then ListOffsets on each leader until the partition answers (a leader that
    answers a leader error is asked of Metadata again; the leaders found are ``Pipeline.leaders``).  Each
    history is released as soon as all its partitions answer, its CreateTopic operations observed over
    [CreateTopics sent, the poll that found them ready]; one whose partitions never answer within the
    deadline (it scales with the batch) is cut as ``error`` with what the broker last said."""

    def __init__(self, session, runs: list):
        self.session, self.pipeline, self.waiting = session, session.pipeline, runs
        self.topics = new_topics(runs, self.pipeline.creation_configs)
        self.results: dict = {}
        self.leaders = self.pipeline.leaders  # shared with the histories (client/routing.py)
        self.pending: dict[tuple[str, int], str] = {}  # partition -> what is awaited, in words
        self.sent, self.inflight = self.pipeline.clock.now(), 0
        self.wait_s = ready_wait_s(sum(t.partitions for t in self.topics), self.pipeline.ready_s)
        self.deadline = time.monotonic() + self.wait_s

    def start(self) -> None:
        if not self.topics:
            return self.created({}, self.sent)
        self.pipeline.live_topics |= {t.name for t in self.topics}
        self.pipeline.call(admin.create_topics(self.topics), self.created)

    def created(self, results, received: int) -> None:
        self.session.committed()
        if not isinstance(results, dict):
            validity = "unknown" if isinstance(results, Lost) else "error"
            return self.give_up(f"CreateTopics: {results.reason}", received, validity=validity)
        self.results = {
            name: (0, None) if code == admin.TOPIC_ALREADY_EXISTS else (code, message)
            for name, (code, message) in results.items()
        }
        self.pending = {
            (t.name, p): "a leader (Metadata)"
            for t in self.topics
            if self.results.get(t.name, (-1,))[0] == 0
            for p in range(t.partitions)
        }
        self.settle(received)

    def poll(self) -> None:
        """Metadata for partitions without a known leader, else ListOffsets on each leader."""
        unled = sorted({key[0] for key in self.pending if self.leaders.node(key) is None})
        if unled:
            self.inflight = 1
            return self.pipeline.call(admin.metadata(unled), self.described)
        groups = self.by_leader()
        self.inflight = len(groups)
        for address, keys in groups.items():
            targets = [(name, p, messages.LATEST_TIMESTAMP) for name, p in keys]
            self.pipeline.call(messages.list_offsets(targets), self.polled, address)

    def by_leader(self) -> dict[tuple[str, int], list]:
        out: dict = {}
        for key in sorted(self.pending):
            out.setdefault(self.leaders.address(key) or self.pipeline.bootstrap, []).append(key)
        return out

    def described(self, view, received: int) -> None:
        if isinstance(view, admin.ClusterView):
            self.leaders.learn(view)
            for key in self.pending:
                if self.leaders.node(key) is not None:
                    self.pending[key] = f"ListOffsets on its leader, node {self.leaders.node(key)}"
        self.answered(received)

    def polled(self, answers, received: int) -> None:
        if isinstance(answers, dict):
            for key, outcome in answers.items():
                if outcome.error_code == 0:
                    self.pending.pop(key, None)
                    continue
                if outcome.error_code in messages.LEADER_ERRORS:  # led elsewhere now: Metadata is asked again
                    self.leaders.forget(key)
                if key in self.pending:
                    self.pending[key] = f"ListOffsets on its leader (last error code {outcome.error_code})"
        self.answered(received)

    def answered(self, received: int) -> None:
        self.inflight -= 1
        if self.inflight == 0:
            self.settle(received)

    def settle(self, received: int) -> None:
        """Release the histories whose partitions all answer; poll again for the rest, or give up."""
        received = self.pipeline.clock.stamp(received)
        released = [run for run in self.waiting if not run.needs(self.pending)]
        self.waiting = [run for run in self.waiting if run.needs(self.pending)]
        for run in released:
            run.created(self.results, self.sent, received)
        if self.pending and time.monotonic() > self.deadline:
            (name, partition), awaited = min(self.pending.items())
            return self.give_up(
                f"topic {name} partition {partition} not ready {self.wait_s:.0f} s after "
                f"CreateTopics: still waiting for {awaited}",
                received,
                released,
            )
        if self.pending:
            self.pipeline.later(POLL_S, self.poll)
        self.verify(released)

    def verify(self, runs: list) -> None:
        """DescribeConfigs the released histories' topics: a config the broker reports with another
        value than asked (it ignored it) cuts the history as ``unknown``, with the observed value."""
        asked = {name: configs for run in runs for name, configs in run.asked_configs(self.pipeline.held).items()}
        if not asked:
            return self.session.released(runs)
        keys = self.pipeline.probed.describe_keys  # False: the broker cannot parse named keys, so all are asked
        call = admin.describe_topics_configs(
            [(name, list(configs) if keys else None) for name, configs in asked.items()]
        )
        self.pipeline.call(call, lambda answer, received: self.verified(runs, asked, answer))

    def verified(self, runs: list, asked: dict, answer) -> None:
        if not isinstance(answer, dict):  # configs that cannot be checked cannot be trusted
            for run in runs:
                run.cut = run.cut or Cut("unknown", 0, f"topic configs could not be described: {answer.reason}")
        else:
            for run in runs:
                ignored = ignored_configs(asked, answer, run.asked_configs(self.pipeline.held))
                if ignored:
                    run.cut = Cut("unknown", 0, f"the broker did not apply topic config {ignored}")
                    self.pipeline.ignored_configs.add(ignored.split(" ")[0])
        self.session.released(runs)

    def give_up(self, reason: str, received: int, released: Sequence = (), validity: str = "error") -> None:
        for run in self.waiting:
            run.cut = Cut(validity, 0, reason)
        self.session.released([*released, *self.waiting])
        self.waiting = []


def new_topics(runs: list, configs) -> list[admin.NewTopic]:
    """The batch's topics, once each: a topic histories share (sharing.py) has all their partitions."""
    topics: dict[str, admin.NewTopic] = {}
    for run in runs:
        for op in run.prefix:
            name, last = run.at(op.topic, op.config.partitions - 1)
            partitions = max(last + 1, topics[name].partitions if name in topics else 0)
            topics[name] = admin.NewTopic(name, configs(op.config), partitions)
    return list(topics.values())


def ignored_configs(asked: dict, answer: dict, mine: dict) -> str:
    """The first config of ``mine`` that the broker describes with a value other than the one asked
    (``key=asked (described: value)``), or "".  A key it does not describe at all is left to the judge
    (a removed config the model expects rejected must not be hidden)."""
    for name, configs in mine.items():
        code, described = answer.get(name, (0, {}))
        for key, value in configs.items():
            seen = described.get(key) if code == 0 else None
            if seen is not None and str(seen).lower() != str(value).lower():
                return f"{key}={value} (described: {seen})"
    return ""
