"""Input-feature coverage: a history's features are named from its inputs alone, counted per clause, and a
feature the reference drew that an implementation never received is a gap unless its target says why."""

from __future__ import annotations

from ktc.judge.features import features
from ktc.reference.types import INT64_MIN, Batch, CreateTopic, History, ListOffsets, Produce, Record, TopicConfig
from ktc.reports import coverage
from ktc.suites._support import LAT, NOW


def test_features_name_codecs_attribute_bits_timestamp_edges_and_listoffsets_requests():
    sent = Batch((Record(-1), Record(-5), Record(INT64_MIN)), codec="zstd", timestamp_type=LAT, max_timestamp=NOW)
    history = History(
        "kafka-3.9",
        (
            CreateTopic("t", TopicConfig(timestamp_type=LAT)),
            Produce("t", sent),
            ListOffsets("t", -7, 0, 3, True),
            ListOffsets("t", -4),
        ),
        start_ms=NOW,
    )
    assert {
        "codec:zstd",
        "attribute:log-append-time",
        "batch:header-max-disagrees",
        "batch:several-records",
        "timestamp:-1",
        "timestamp:negative",
        "timestamp:Long.MIN",
        "target:other-negative",
        "target:earliest-local",
        "list-offsets:explicit-version",
        "list-offsets:read-committed",
        "topic:log-append-time",
    } <= features(history)
    assert "codec:none" not in features(history) and "attribute:control" not in features(history)


def rows():
    return [
        {"clause": "c", "implementation": "reference", "features": {"codec:gzip": 5, "attribute:control": 2}},
        {"clause": "c", "implementation": "kafka-3.9.2", "features": {"codec:gzip": 1}},
        {"clause": "d", "implementation": "reference", "features": {"codec:gzip": 1}},
    ]


def test_examples_are_summed_per_feature_and_implementation_over_clauses():
    table = coverage.table(rows())
    assert table["features"]["codec:gzip"] == {"reference": 6, "kafka-3.9.2": 1}
    assert table["clauses"]["c"]["attribute:control"] == {"reference": 2}


def test_a_feature_never_sent_is_a_gap_and_a_reason_given_by_the_target_explains_it():
    table = coverage.table(rows())
    assert coverage.gaps(table, {}) == [("attribute:control", "kafka-3.9.2", None)]
    explained = coverage.gaps(table, {"kafka-3.9.2": {"attribute:control": "refused by Kafka"}})
    assert explained == [("attribute:control", "kafka-3.9.2", "refused by Kafka")]
    assert "1 without a reason" in "\n".join(coverage.text(table, {}))


def test_an_implementation_judged_on_nothing_has_no_gaps_but_is_named():
    table = coverage.table(rows() + [{"clause": "c", "implementation": "kafka-container", "features": {}}])
    assert all(impl != "kafka-container" for _name, impl, _why in coverage.gaps(table, {}))
    assert "  judged on nothing (see its rows for why): kafka-container" in coverage.text(table, {})


def test_a_feature_the_reference_drew_only_on_a_clause_the_implementation_never_ran_is_no_gap():
    table = coverage.table(rows() + [{"clause": "e", "implementation": "reference", "features": {"codec:lz4": 3}}])
    assert ("codec:lz4", "kafka-3.9.2", None) not in coverage.gaps(table, {})
    assert coverage.gaps(table, {}) == [("attribute:control", "kafka-3.9.2", None)]
