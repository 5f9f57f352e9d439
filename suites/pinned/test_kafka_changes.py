"""Kafka's own timestamp changes, one pinned history each (specs/kafka-versions.toml lists them with
their JIRA or KIP).  Each is judged under the profile of the first release that has the change, on every
implementation and on every Apache Kafka release ktc starts (``Capabilities.releases``): a release before
the change (or, for a bug, one it affected) fails exactly the change's clauses; every other passes.
``ktc matrix`` shows each as a row of the version table."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from ktc.judge.harness import assert_conforms
from ktc.reference.model import Model
from ktc.reference.types import ONE_HOUR_MS, CreateTopic, Fetch, History, ListOffsets, Produce, TopicConfig
from ktc.specs import versions
from ktc.specs.profiles import get as get_profile
from ktc.suites._support import LAT, NOW, batch

DAY_MS = 24 * ONE_HOUR_MS


@dataclass(frozen=True)
class Pin:
    change: str  # its id in specs/kafka-versions.toml
    ops: tuple
    why: str  # what the releases before it answer

    @property
    def profile(self) -> str:
        return versions.profile_for(change(self.change).first)


def change(change_id: str) -> versions.Change:
    return next(c for c in versions.changes() if c.id == change_id)


PINS = (
    Pin(
        "KAFKA-14991",
        (
            CreateTopic("t", TopicConfig(before_max_ms=DAY_MS, after_max_ms=ONE_HOUR_MS)),
            Produce("t", batch(NOW - 2 * DAY_MS)),
            Fetch("t"),
        ),
        "3.5 refuses message.timestamp.before.max.ms (INVALID_CONFIG): no before bound to reject the record",
    ),
    Pin(
        "KAFKA-16341",
        (CreateTopic("t"), Produce("t", batch(NOW, NOW + 10, NOW)), ListOffsets("t", -3)),
        "3.7 answers the batch's last offset (2), not the record with the max (1)",
    ),
    Pin(
        "KAFKA-16342",
        (CreateTopic("t"), Produce("t", batch(NOW, NOW + 10, NOW, codec="gzip")), ListOffsets("t", -3)),
        "3.0-3.7 answer a compressed batch's last offset (2)",
    ),
    Pin(
        "KAFKA-16310",
        (CreateTopic("t", TopicConfig(timestamp_type=LAT)), Produce("t", batch(NOW, NOW, NOW)), ListOffsets("t", -3)),
        "3.0-3.7 answer a LogAppendTime batch's last offset (2), not its first (0)",
    ),
    Pin(
        "KIP-1005",
        (CreateTopic("t"), Produce("t", batch(NOW)), ListOffsets("t", -5)),
        "3.5-3.8 do not know LATEST_TIERED and search -5 as a timestamp: offset 0",
    ),
    Pin(
        "KAFKA-17331",
        (CreateTopic("t"), Produce("t", batch(NOW)), ListOffsets("t", -7)),
        "3.5-3.8 search -7 as a timestamp (offset 0) instead of answering UNSUPPORTED_VERSION",
    ),
    Pin(
        "KAFKA-16368",
        (CreateTopic("t"), Produce("t", batch(NOW + 2 * ONE_HOUR_MS)), Fetch("t")),
        "3.x accept a record two hours ahead: after.max.ms defaults to Long.MAX_VALUE there",
    ),
    Pin(
        "KAFKA-17997",
        (CreateTopic("t", TopicConfig(difference_max_ms=ONE_HOUR_MS)), Produce("t", batch(NOW)), Fetch("t")),
        "3.x create the topic (difference.max.ms exists there, deprecated from 3.6) and append the record",
    ),
    Pin(
        "KIP-1023",
        (CreateTopic("t"), Produce("t", batch(NOW)), ListOffsets("t", -6)),
        "4.0-4.1 speak ListOffsets v10 at most and refuse -6 there (35), as 3.9 does at every version; 3.5-3.8 "
        "search -6 as a timestamp (offset 0)",
    ),
)


def pinned(pin: Pin):
    marks = [pytest.mark.profiles(pin.profile), pytest.mark.clause(*change(pin.change).clauses)]
    return pytest.param(pin, id=pin.change, marks=marks)


@pytest.mark.pinned
@pytest.mark.kafka_change
@pytest.mark.parametrize("pin", [pinned(p) for p in PINS])
def test_a_change_in_kafka_fails_exactly_where_it_did_not_hold(impl, profile, pin):
    assert_conforms(impl, History(profile, pin.ops, start_ms=NOW))


def lines_of(ranges: str) -> list[versions.Line]:
    """The release lines inside 'a.b.c-x.y.z' (both ends included)."""
    low, high = (versions.key(v) for v in ranges.split("-"))
    return [ln for ln in versions.lines() if low[:2] <= versions.key(ln.last_known)[:2] <= high[:2]]


def affected_lines(pin: Pin) -> list[versions.Line]:
    """The lines before the change (a bug: the lines it names), from the versions table."""
    found = change(pin.change)
    if found.affected:
        return lines_of(found.affected)
    return [ln for ln in versions.lines() if versions.key(ln.last_known) < versions.key(found.first)]


def as_spoken(line: versions.Line):
    """The line's profile, its ListOffsets version capped at what the line answers (4.0 and 4.1 share kafka-4
    with 4.2-4.4 but speak v10, not v11): a request without a version goes out at the newest both speak."""
    profile = get_profile(line.profile)
    spoken = dict(line.api_max).get("ListOffsets", profile.list_offsets_max_version)
    newest = min(profile.list_offsets_max_version, spoken)
    return replace(profile, list_offsets_max_version=newest)


@pytest.mark.parametrize("pin", PINS, ids=[p.change for p in PINS])
def test_each_pinned_change_is_told_apart_by_the_model_exactly_on_its_affected_lines(pin):
    """The reference under each line's profile differs from the change's profile on the affected lines
    only: the pin can show red where the change did not hold and nowhere else."""
    fixed = Model(get_profile(pin.profile)).run(History(pin.profile, pin.ops, start_ms=NOW))
    affected = {ln.line for ln in affected_lines(pin)}
    assert affected, f"{pin.change}: no line of specs/kafka-versions.toml is affected"
    for ln in versions.lines():
        own = Model(as_spoken(ln)).run(History(ln.profile, pin.ops, start_ms=NOW))
        assert (own != fixed) == (ln.line in affected), f"{pin.change} on {ln.line}: {own} vs {fixed} ({pin.why})"


def test_every_change_names_clauses_and_switches_that_exist_and_has_a_pin_or_a_reason():
    from dataclasses import fields

    from ktc.specs.clauses import all_clauses
    from ktc.specs.profiles import Profile

    switches = {f.name for f in fields(Profile)}
    for found in versions.changes():
        assert set(found.clauses) <= set(all_clauses()), f"{found.id}: unknown clauses {found.clauses}"
        assert set(found.switches) <= switches, f"{found.id}: unknown switches {found.switches}"
    unpinned = {c.id for c in versions.changes()} - {p.change for p in PINS}
    assert unpinned == set(), unpinned
