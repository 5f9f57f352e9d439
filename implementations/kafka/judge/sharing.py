"""Histories of a batch that share one topic: each its own block of the topic's partitions.

A broker's cost of a history is mostly its topic: creating it (a topic record, a config record per config, the
broker's log config updates, which look through every log it holds, the topic's metrics) and deleting it.
Histories of one batch (pipeline.py) whose only topic has the same config, and which only produce to, fetch
from and list offsets of that topic's own partitions, are run on one topic of that config with as many
partitions as they have together: each history gets its own partitions, numbered on from the previous one's.

What such a history judges is the same as on a topic of its own: produce, fetch and list offsets act on one
partition of a topic, and every timestamp rule reads the topic's config, which is the same for all of them (the
model's answers depend on the partition alone, never on its neighbours).  The CreateTopic operation's answer is
the one CreateTopics answer for the shared topic (its error code depends on the config, not on the partition
count).  The history is judged as written: its own topic of its own partition count, its operations on its own
partition numbers; only the request on the wire names the shared topic's partition (``HistoryRun.at``).

Not shared: a history with another operation (a second CreateTopic, a RetentionPass, which acts per topic on
Kafka, a DescribeLog, a clock move, a Crash, a leader election) or one that names a partition its topic does not
have (the answer must be the broker's error, not a neighbour's partition).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ktc.reference.types import CreateTopic, Fetch, History, ListOffsets, Produce

SHARED_OPS = (Produce, Fetch, ListOffsets)


def shareable(history: History) -> CreateTopic | None:
    """The history's CreateTopic when the history may run on a block of a shared topic, else None."""
    if not history.ops or not isinstance(history.ops[0], CreateTopic):
        return None
    create = history.ops[0]
    for op in history.ops[1:]:
        if not isinstance(op, SHARED_OPS) or op.topic != create.topic:
            return None
        if not 0 <= op.partition < create.config.partitions:
            return None
    return create


def grouped(runs: Sequence) -> list:
    """The runs in creation order: the shareable ones by their topic's config, so that a batch holds few configs
    (the others keep their order, after them).  Their order on the broker is free: histories never share a
    partition, and on a shared frozen clock each of their operations is at the same instant whatever the order."""
    keyed = [(repr(create.config), i) for i, run in enumerate(runs) if (create := shareable(run.history))]
    alone = [run for run in runs if not shareable(run.history)]
    return [runs[i] for _key, i in sorted(keyed)] + alone


def share(runs: Sequence, holders: Counter) -> None:
    """Give the shareable runs of one batch with equal configs one topic (the first one's name), each a block
    of its partitions; count every run's created topics in ``holders`` (a topic is deleted once none holds it)."""
    first: dict[object, tuple] = {}  # config -> (the shared topic's name, its next free partition)
    for run in runs:
        create = shareable(run.history)
        if create is not None:
            name, base = first.get(create.config, (run.names[create.topic], 0))
            run.place(create.topic, name, base)
            first[create.config] = (name, base + create.config.partitions)
        holders.update(run.created_partitions().keys())
