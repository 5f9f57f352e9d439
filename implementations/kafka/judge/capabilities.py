"""What a real broker can be judged on: the clauses no protocol request can observe, and profiles.

A broker is judged under two profiles: the one its version family ships (probed from its
defaults), on every suite, and ``kip``, the KIP texts as written, on pinned inputs only
(suites/pinned, suites/deviations).  Where Kafka departs from the KIPs those ``kip`` rows fail;
the departures are expected, listed per version with reason and source in
``expectations/<implementation>.toml`` (strict: a departure that stops failing fails the run).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from ktc.implementations.protocol import Capabilities
from ktc.specs.profiles import names

KIP = "kip"
SENTINEL_CHANGE = "KIP-228's sentinel change (Long.MIN_VALUE, isTimestampExtended) was never adopted by Kafka"
# The clauses a broker ktc did not start is judged on over real time, with --real-time (suites/kip32/
# test_real_time.py; ktc/judge/realtime.py): without it they stay unsupported, the reason naming the option.
WITH_REAL_TIME = "judged over real time only: --kafka-bootstrap HOST:PORT --real-time BUDGET (e.g. 12m)"
NO_ROLLS = f"segment rolls are not observable through the Kafka protocol; {WITH_REAL_TIME}"
MOVES_LEADERS = (
    "needs leader changes: --move-leaders moves the leadership of ktc's own topics on a cluster you run "
    "(or --impl kafka-cluster: skewed clocks ktc sets)"
)
NOT_ON_A_BROKER = {
    "KIP-32.roll-by-first-timestamp": NO_ROLLS,
    "KIP-32.future-timestamp-breaks-rolling": NO_ROLLS,
    "KIP-32.retention-by-last-timestamp": f"retention passes cannot be triggered on demand; {WITH_REAL_TIME}",
    "KIP-32.retention-segment-level": f"retention passes cannot be triggered on demand; {WITH_REAL_TIME}",
    "KIP-32.retention-mtime-fallback": f"retention passes cannot be triggered on demand; {WITH_REAL_TIME}",
    "KIP-32.future-timestamp-pins-retention": f"retention passes cannot be triggered on demand; {WITH_REAL_TIME}",
    "KIP-32.log-append-time-leader-max": MOVES_LEADERS,
    "KIP-32.log-append-time-never-backwards": MOVES_LEADERS,
    "KIP-32.followers-keep-log-append-time": MOVES_LEADERS,
    "KIP-33.time-index-running-max": "the time index is not observable through the Kafka protocol",
    "KIP-33.time-index-strictly-increasing": "the time index is not observable through the Kafka protocol",
    "KIP-33.time-index-skips-no-timestamp": "the time index is not observable through the Kafka protocol",
    "KIP-33.list-offsets-first-segment-only": f"needs several segments, and rolls are not observable; {WITH_REAL_TIME}",
    "KIP-937.future-timestamp-warning": "Kafka logs no such warning (LogValidator has no logger)",
    "KIP-228.sentinel-long-min": SENTINEL_CHANGE,
    "KIP-228.producer-broker-table": SENTINEL_CHANGE,
    "KIP-228.timestamp-extended-bit": SENTINEL_CHANGE,
    "KIP-228.consumer-table": "a consumer-side table: no broker request decodes it",
    "KIP-870": "KIP-870 was never adopted: no broker has retention.max.eventtime.ms",
}


# Input features (ktc/judge/features.py) the reference tier draws that no history sent to a Kafka broker
# carries, and why: shown beside the coverage table of every report (reports/coverage.py).
NOT_SENT = {
    "attribute:kip-228-extended": "KIP-228's isTimestampExtended bit is drawn only under the kip profile, which a "
    "broker is judged under on pinned inputs only (KIP-228 was never adopted)",
    "config:retention.max.eventtime.ms": "KIP-870 was never adopted: no Kafka broker has retention.max.eventtime.ms",
}


# Observed on a broker ktc started on a clock it sets: segments and time indexes in its log directory
# (judge/logdir.py), retention run by the broker's own retention thread at the history's now
# (judge/retention.py).
IN_THE_LOG_DIR = (
    "KIP-32.roll-by-first-timestamp",
    "KIP-32.future-timestamp-breaks-rolling",
    "KIP-32.retention-by-last-timestamp",
    "KIP-32.retention-segment-level",
    "KIP-32.retention-mtime-fallback",
    "KIP-32.future-timestamp-pins-retention",
    "KIP-33.list-offsets-first-segment-only",
    "KIP-33.time-index-running-max",
    "KIP-33.time-index-strictly-increasing",
    "KIP-33.time-index-skips-no-timestamp",
)


# Over real time (ktc/judge/realtime_plan.py: CLAUSES), the log start offset shows retention and, through it,
# rolls; the time index's internal order stays out of sight.
OVER_REAL_TIME = tuple(c for c in IN_THE_LOG_DIR if not c.startswith("KIP-33.time-index-"))
BY_HISTORIES = (
    "judged by the real-time tier (--real-time), not by histories: a broker ktc did not start runs no "
    "retention pass on demand and shows no segment"
)


def broker_capabilities(
    shipped_profile: str, reads_log_dir: bool = False, release: bool = False, real_time: bool = False
) -> Capabilities:
    """The broker's own profile, and ``kip`` on pinned inputs; the unobservable clauses unsupported
    (rolls, retention and the time index are observable on a broker ktc started on its clock; rolls and
    retention over ``real_time`` on one it did not, by the real-time tier's tests alone).  An Apache Kafka
    ``release`` ktc started is held to each of Kafka's own changes under its profile."""
    unsupported = {k: v for k, v in NOT_ON_A_BROKER.items() if not (reads_log_dir and k in IN_THE_LOG_DIR)}
    over_real_time = frozenset(OVER_REAL_TIME) if real_time and not reads_log_dir else frozenset()
    unsupported.update({k: BY_HISTORIES for k in over_real_time})
    releases = frozenset(p for p in names("broker") if p != KIP) if release else frozenset()
    return Capabilities(
        profiles=frozenset({shipped_profile, KIP}),
        unsupported=unsupported,
        pinned_only=frozenset({KIP}) - {shipped_profile},
        releases=releases,
        real_time=over_real_time,
    )


# A topic config the broker accepted but did not apply (judge/pipeline.py: DescribeConfigs after
# CreateTopics) makes the clauses that rest on it unsupported for that broker: observed, not assumed.
CLAUSES_RESTING_ON = {
    "message.timestamp.type": "log-append-time",
    "message.timestamp.before.max.ms": "KIP-937.",
    "message.timestamp.after.max.ms": "KIP-937.",
    "message.timestamp.difference.max.ms": "KIP-937.",
    "compression.type": "KIP-228.",
}


def observed_unsupported(ignored: set[str], clause_ids) -> dict[str, str]:
    """Clause id -> reason, for every clause resting on a config the broker was seen to ignore."""
    out = {}
    for key in sorted(ignored):
        marker = CLAUSES_RESTING_ON.get(key)
        for clause in clause_ids:
            if marker and marker in clause and clause not in out:
                out[clause] = f"the broker accepts topic config {key} but does not apply it (seen with DescribeConfigs)"
    return out


def with_observations(caps: Capabilities, ignored: set[str], clause_ids) -> Capabilities:
    if not ignored:
        return caps
    return replace(caps, unsupported={**observed_unsupported(ignored, clause_ids), **caps.unsupported})


# The clauses that rest on a ListOffsets target (judge/probe.py TARGETS): a broker seen not to answer the
# target (it closed the connection) cannot be judged on them, and says why in the probe's own words.
CLAUSES_ON_TARGET = {
    -3: (
        "KIP-33.list-offsets-max-timestamp",
        "KIP-33.list-offsets-max-timestamp-compressed",
        "KIP-33.list-offsets-max-timestamp-log-append-time",
        "KIP-33.read-max-timestamp-holder",  # an invariant over MAX_TIMESTAMP's answers: none without them
    ),
    -4: ("KIP-33.list-offsets-earliest-local",),
    -5: ("KIP-33.list-offsets-latest-tiered",),
    -6: ("KIP-33.list-offsets-earliest-pending-upload",),
    -7: ("KIP-33.list-offsets-unknown-negative-target",),
}


def probed_unsupported(refused_targets: dict[int, str]) -> dict[str, str]:
    """Clause id -> the probed behaviour, for every clause resting on a target the broker refused."""
    return {
        clause: reason
        for target, reason in sorted(refused_targets.items())
        for clause in CLAUSES_ON_TARGET.get(target, ())
    }


class Found(Mapping):
    """Clause id -> reason, worked out by ``everything()`` on first use and kept: a mapping the harness reads
    like any other, that asks the broker only when a test first needs it."""

    found: dict[str, str] | None = None

    def everything(self) -> dict[str, str]:
        raise NotImplementedError

    def __getitem__(self, clause: str) -> str:
        return self.everything()[clause]

    def __iter__(self):
        return iter(self.everything())

    def __len__(self) -> int:
        return len(self.everything())


class Probing(Found):
    """A broker's unsupported clauses: those declared, and on first use those resting on what the probe
    (judge/probe.py) found it cannot answer.  Lazy, so a process that only collects the tests (the other
    pytest-xdist worker) never starts or probes the broker; the one that runs them probes it once."""

    def __init__(self, declared: Mapping[str, str], refused_targets: Callable[[], dict[int, str]]):
        self.declared, self.refused_targets, self.found = declared, refused_targets, None

    def everything(self) -> dict[str, str]:
        if self.found is None:
            self.found = {**probed_unsupported(self.refused_targets()), **self.declared}
        return self.found


def with_probe(caps: Capabilities, refused_targets: Callable[[], dict[int, str]]) -> Capabilities:
    return replace(caps, unsupported=Probing(caps.unsupported, refused_targets))
