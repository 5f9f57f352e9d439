"""Broker topic names and configs for a history's topics.

Every broker topic ktc creates is named ``ktc-<run id>-<worker>-<n>-<history topic>``: the run id is
shared by every pytest-xdist worker of one run (``KTC_RUN_ID``, set by the plugin) and differs
between runs, the worker id keeps two workers apart, and ``n`` never repeats inside a process.  So
no two histories, workers or runs ever share a topic, and ``ktc clean`` can tell ktc's topics from
anyone else's (``OWN_TOPIC``).
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
import time

from ktc.reference.types import CONFIG_NAMES, History, TimestampType, TopicConfig

OWN_TOPIC = re.compile(r"^ktc-(?:[0-9a-z]{10}-[a-z0-9]+-\d+|\d+)-[A-Za-z0-9._-]+$")  # new names, and the old ktc-N-
RUN_ID_ENV = "KTC_RUN_ID"
TOPIC_LOG_ENV = "KTC_TOPIC_LOG"  # a file every name is appended to, with the worker that made it


def new_run_id() -> str:
    """Ten characters: seconds since 2020 in base 36 (sortable) and four random ones."""
    stamp = int(time.time()) - 1_577_836_800
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while stamp:
        stamp, digit = divmod(stamp, 36)
        out = digits[digit] + out
    return (out.rjust(6, "0") + "".join(secrets.choice(digits) for _ in range(4)))[-10:]


def run_id() -> str:
    """This run's id: KTC_RUN_ID when the plugin set it, else one made now for this process."""
    if not os.environ.get(RUN_ID_ENV):
        os.environ[RUN_ID_ENV] = new_run_id()
    return os.environ[RUN_ID_ENV]


def worker_id() -> str:
    return re.sub(r"[^a-z0-9]", "", os.environ.get("PYTEST_XDIST_WORKER", "main").lower()) or "main"


class TopicNamer:
    """Fresh broker topic names for histories, never reused (see the module docstring)."""

    serial = itertools.count()  # one per process, shared by every namer: two namers never collide

    def __init__(self, run: str | None = None, worker: str | None = None):
        self.prefix = f"ktc-{run or run_id()}-{worker or worker_id()}-"
        self.counter = TopicNamer.serial

    def names(self, history: History) -> dict[str, str]:
        """A fresh broker topic for every topic of the history, so histories never share one."""
        names = {
            op.topic: f"{self.prefix}{next(self.counter)}-{op.topic}" for op in history.ops if hasattr(op, "topic")
        }
        log = os.environ.get(TOPIC_LOG_ENV)
        if log:  # suites/broker/test_topic_hygiene.py proves workers never share a name
            with open(log, "a") as out:
                out.writelines(f"{worker_id()} {name}\n" for name in names.values())
        return names


def kafka_configs(config: TopicConfig) -> dict[str, int | str]:
    """The topic configs to ask the broker for, by Kafka config name."""
    out: dict[str, int | str] = {
        name: getattr(config, attr) for attr, name in CONFIG_NAMES.items() if getattr(config, attr) is not None
    }
    if config.timestamp_type is TimestampType.LOG_APPEND_TIME:
        out["message.timestamp.type"] = "LogAppendTime"
    if config.compression_type != "producer":
        out["compression.type"] = config.compression_type
    return out
