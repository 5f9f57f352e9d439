"""A broker ktc starts that fails to start is started once per worker: every later test meets the same error at
once (a broker that never answers would otherwise cost its ready timeout, 60 s, in every test)."""

from dataclasses import replace

import pytest

from ktc.implementations.families.kafka import KAFKA
from ktc.implementations.kafka.launch import LocalKafka
from ktc.implementations.kafka.settings import Started
from ktc.kafka.processes.broker import BrokerError


class NeverStarts:
    """A launcher (implementations/kafka/launch.py) whose broker refuses to start, counting the attempts."""

    attempts = 0

    def __init__(self, settings: Started):
        self.local = LocalKafka(settings)

    def __getattr__(self, name: str):
        return getattr(self.local, name)

    def start(self) -> str:
        NeverStarts.attempts += 1
        raise BrokerError("Invalid value abc for configuration log.retention.ms: Not a number of type LONG")


def test_a_broker_that_failed_to_start_is_not_started_again_and_every_later_test_meets_the_same_error():
    impl = replace(KAFKA, start=NeverStarts).implementation({"kafka_version": "3.9.2"}, {})
    for _ in range(3):
        with pytest.raises(BrokerError, match="Invalid value abc for configuration log.retention.ms"):
            impl.address()
    assert NeverStarts.attempts == 1
    impl.close()
