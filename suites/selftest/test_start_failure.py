"""A broker ktc starts that fails to start is started once per worker: every later test meets the same error at
once (a broker that never answers would otherwise cost its ready timeout, 60 s, in every test)."""
import pytest

pytest.importorskip("kafka", reason="the broker extra is not installed")

from ktc.implementations.kafka.adapter import KafkaImplementation  # noqa: E402
from ktc.kafka.processes.broker import BrokerError  # noqa: E402


class NeverStarts(KafkaImplementation):
    def __init__(self):
        super().__init__("3.9.2", bootstrap="")
        self.attempts = 0

    def start_process(self):
        self.attempts += 1
        raise BrokerError("Invalid value abc for configuration log.retention.ms: Not a number of type LONG")


def test_a_broker_that_failed_to_start_is_not_started_again_and_every_later_test_meets_the_same_error():
    impl = NeverStarts()
    for _ in range(3):
        with pytest.raises(BrokerError, match="Invalid value abc for configuration log.retention.ms"):
            impl.address()
    assert impl.attempts == 1
    impl.close()
