"""Whole histories as a state machine: appends across partitions, clock steps, leader changes
between brokers with skewed clocks, retention passes and ListOffsets queries.

After every step the implementation replays the history so far and must agree with the
reference on every clause the test cites.
"""

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from ktc.judge.harness import assert_conforms
from ktc.reference.types import (
    Advance,
    CreateTopic,
    DescribeLog,
    ElectLeader,
    Fetch,
    History,
    ListOffsets,
    Produce,
    RetentionPass,
    StepClock,
)
from ktc.strategies import batches, timestamps, topic_configs
from ktc.suites._support import NOW

BROKERS, SKEW = 3, 120_000
CLAUSES = (
    "KIP-32.log-append-time-assigned",
    "KIP-32.log-append-time-leader-max",
    "KIP-32.log-append-time-never-backwards",
    "KIP-32.followers-keep-log-append-time",
    "KIP-32.create-time-kept",
    "KIP-32.retention-segment-level",
    "KIP-32.roll-by-first-timestamp",
    "KIP-33.list-offsets-first-offset-at-or-after",
    "KIP-33.list-offsets-max-timestamp",
    "KIP-33.time-index-running-max",
    "KIP-937.whole-batch-rejection",
    "KIP-32.offsets-contiguous",
)


def machine_for(impl, profile):
    class Histories(RuleBasedStateMachine):
        @initialize(
            config=topic_configs(profile=profile),
            offsets=st.lists(st.integers(-SKEW, SKEW), min_size=BROKERS - 1, max_size=BROKERS - 1),
        )
        def create(self, config, offsets):
            self.ops, self.offsets = [CreateTopic("t", config)], (0, *offsets)
            self.partitions = config.partitions

        @rule(data=st.data())
        def produce(self, data):
            partition = data.draw(st.integers(0, self.partitions - 1))
            self.ops.append(
                Produce("t", data.draw(batches(timestamps=timestamps(now=NOW, bounds=[3_600_000]))), partition)
            )

        @rule(ms=st.integers(0, 3 * 86_400_000))
        def advance(self, ms):
            self.ops.append(Advance(ms))

        @rule(broker=st.integers(0, BROKERS - 1), delta=st.integers(-SKEW, SKEW))
        def step_clock(self, broker, delta):
            self.ops.append(StepClock(broker, delta))

        @rule(broker=st.integers(0, BROKERS - 1), data=st.data())
        def elect(self, broker, data):
            self.ops.append(ElectLeader("t", broker, data.draw(st.integers(0, self.partitions - 1))))

        @rule(data=st.data())
        def retention(self, data):
            self.ops.append(RetentionPass("t", data.draw(st.integers(0, self.partitions - 1))))

        @rule(where=st.sampled_from([-1, -2, -3, 0, NOW]), data=st.data())
        def list_offsets(self, where, data):
            self.ops.append(ListOffsets("t", where, data.draw(st.integers(0, self.partitions - 1))))

        @invariant()
        def agrees_with_reference(self):
            reads = [op for p in range(self.partitions) for op in (Fetch("t", p), DescribeLog("t", p))]
            assert_conforms(impl, History(profile, tuple(self.ops + reads), start_ms=NOW, clock_offsets=self.offsets))

    return Histories


@pytest.mark.clause(*CLAUSES)
def test_histories_with_leader_changes_and_skewed_clocks_agree(impl, profile):
    machine = machine_for(impl, profile)
    run_state_machine_as_test(
        machine,
        settings=settings(settings(), max_examples=max(10, settings().max_examples // 4), stateful_step_count=12),
    )
