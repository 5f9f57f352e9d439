"""The profile rules of judge/discovery.py as data: each release family's configs map to its profile."""

from __future__ import annotations

import pytest

from ktc.kafka.discovery import (
    PROFILE_RULES,
    Discovery,
    own_node,
    profile_by_api,
    profile_for,
    unrecognised,
)

LONG_MAX = str(2**63 - 1)


@pytest.mark.parametrize(
    "limits, expected",
    [
        ({"difference": LONG_MAX}, "kafka-3.5"),
        ({"difference": LONG_MAX, "before": LONG_MAX, "after": LONG_MAX}, "kafka-3.6"),
        ({"before": LONG_MAX, "after": "3600000"}, "kafka-4"),
    ],
)
def test_each_release_familys_configs_map_to_its_profile(limits, expected):
    assert profile_for(limits) == expected


@pytest.mark.parametrize(
    "limits",
    [{}, {"before": LONG_MAX, "after": LONG_MAX}, {"after": "3600000"}, {"difference": "1", "after": "3600000"}],
)
def test_configs_no_rule_names_give_no_profile(limits):
    assert profile_for(limits) is None


def test_every_rule_names_a_known_profile():
    from ktc.specs.profiles import names

    assert {profile for profile, _keys, _after in PROFILE_RULES} <= set(names())


def test_the_bootstraps_own_node_is_asked_not_node_1():
    brokers = {0: ("127.0.0.1", 9092), 1: ("127.0.0.1", 9093), 7: ("127.0.0.1", 9094)}
    assert own_node(brokers, ("127.0.0.1", 9094), controller=1) == 7
    assert own_node(brokers, ("10.0.0.9", 9999), controller=0) == 0
    assert own_node({5: ("h", 1), 3: ("h", 2)}, ("x", 9), controller=42) == 3


def test_an_unrecognised_broker_is_refused_in_one_line_that_asks_for_profile():
    found = Discovery({0: ("127.0.0.1", 1)}, 0, 0, {}, {"Produce": 9})
    message = str(unrecognised(found, "127.0.0.1:1"))
    assert "\n" not in message and "--profile" in message and "no log.message.timestamp" in message


@pytest.mark.parametrize(
    "api_max, expected",
    [({"Produce": 13}, "kafka-4"), ({"Produce": 12}, "kafka-4"), ({"Produce": 11}, None), ({}, None)],
)
def test_without_timestamp_configs_only_a_kafka_4_api_line_places_a_broker(api_max, expected):
    assert profile_by_api(api_max) == expected


@pytest.mark.parametrize(
    "api_max, line",
    [  # measured on Maven Central's jars (specs/kafka-versions.toml)
        ({"Produce": 9, "ListOffsets": 8}, "3.6"),
        ({"Produce": 10, "ListOffsets": 8}, "3.7"),
        ({"Produce": 11, "ListOffsets": 8}, "3.8"),
        ({"Produce": 11, "ListOffsets": 9}, "3.9"),
    ],
)
def test_apiversions_name_the_release_line_among_those_a_config_rule_matched(api_max, line):
    from ktc.specs import versions

    found = versions.line_by_api("kafka-3.6", {**api_max, "Fetch": 16})
    assert found is not None and found.line == line and found.profile == f"kafka-{line}"


def test_apiversions_no_line_matches_leave_the_config_rules_profile():
    from ktc.specs import versions

    assert versions.line_by_api("kafka-3.6", {"Produce": 99, "ListOffsets": 8}) is None
    assert versions.line_by_api("kafka-3.5", {"Produce": 10, "ListOffsets": 8}) is None  # 3.7's maxima, 3.5's configs


class Broker:
    """A broker's answers to discovery, closing the connection on DescribeConfigs above ``parses``."""

    def __init__(self, parses: int, produce_max: int, limits: dict[str, str]):
        self.parses, self.produce_max, self.limits = parses, produce_max, limits
        self.asked: list[tuple[int, int]] = []  # (DescribeConfigs version, connection)
        self.connections = 0

    def connect(self, *_args, **_kwargs):
        self.connections += 1
        return Connection(self, self.connections)


class Connection:
    def __init__(self, broker: Broker, number: int):
        self.broker, self.number = broker, number
        self.address, self.timeout_s, self.security = ("127.0.0.1", 9092), 10.0, None

    def call(self, call):
        from ktc.kafka.client import admin, wire

        if call.api == "Metadata":
            return admin.ClusterView({111: ("127.0.0.1", 9092)}, 111, {})
        self.broker.asked.append((call.version, self.number))
        if call.version > self.broker.parses:
            raise wire.WireError("127.0.0.1:9092 closed the connection")
        return 0, None, {k: admin.ConfigEntry(k, v, 5, False, ()) for k, v in self.broker.limits.items()}

    def supported_versions(self):
        return {0: (0, self.broker.produce_max), 1: (0, 17), 2: (0, 9), 32: (0, 4)}

    def close(self):
        pass


def discovered(monkeypatch, broker: Broker):
    from ktc.kafka import discovery

    monkeypatch.setattr(discovery.wire, "Client", broker.connect)
    return discovery.discover(broker.connect())


def test_a_question_the_broker_does_not_answer_is_a_note_each_lower_version_asked_on_a_fresh_connection(monkeypatch):
    """tansu: DescribeConfigs(broker) closes the connection at every version; Produce v11 matches no rule."""
    broker = Broker(parses=-1, produce_max=11, limits={})
    found = discovered(monkeypatch, broker)
    assert [version for version, _ in broker.asked] == [4, 3, 2, 1, 0]
    assert len({connection for _, connection in broker.asked}) == 5  # never twice on a connection that closed
    assert found.notes == ("DescribeConfigs(broker): connection closed at v4..v0",)
    assert (found.profile, found.fallback, found.node) == ("kafka-4", True, 111)
    assert "no rule matched" in found.evidence and "connection closed at v4..v0" in found.evidence


def test_a_version_advertised_but_not_parsed_is_asked_again_one_lower_and_said(monkeypatch):
    after = "log.message.timestamp.after.max.ms"
    broker = Broker(parses=3, produce_max=12, limits={after: "3600000", after.replace("after", "before"): "9"})
    found = discovered(monkeypatch, broker)
    assert [version for version, _ in broker.asked] == [4, 3]
    assert found.notes == ("DescribeConfigs(broker): connection closed at v4; answered at v3",)
    assert found.limits == {"after": "3600000", "before": "9"} and found.profile == "kafka-4" and not found.fallback
