"""Crash on the broker targets, offline: which targets decline histories with a Crash and why, the clock that runs
while a broker restarts, and a history whose clock the pipeline drives going on from where the restart left it
(implementations/kafka/judge/restart.py, judge/pipeline.py).  The broker tier runs it for real
(suites/broker/test_crash_recovery.py)."""

from __future__ import annotations

import time
from pathlib import Path

from ktc.implementations.families.kafka import KAFKA
from ktc.implementations.families.kfake import TARGET as KFAKE
from ktc.implementations.families.tansu import TARGET as TANSU
from ktc.implementations.kafka.judge.history_run import HistoryRun
from ktc.implementations.kafka.judge.observe import Observed
from ktc.implementations.kafka.judge.restart import declining_crashes, running
from ktc.implementations.kafka.launch import Address, Kfake, LocalKafka, Tansu
from ktc.implementations.kafka.processes.kfake import KfakeBroker
from ktc.kafka.processes.clock import ControlledClock
from ktc.reference.types import Ack, Crash, CreateTopic, Fetch, History, StepClock

PLAIN = History("kafka-4", (CreateTopic("t"), Fetch("t")))
CRASHING = History("kafka-4", (CreateTopic("t"), Crash(), Fetch("t")))


def test_declining_crashes_says_why_and_keeps_what_was_declined_before():
    inner = lambda h: "steps a clock" if any(isinstance(op, StepClock) for op in h.ops) else None  # noqa: E731
    decline = declining_crashes("it keeps nothing", inner)
    assert decline(CRASHING) == "the history crashes the broker: it keeps nothing"
    assert decline(PLAIN) is None
    assert decline(History("kafka-4", (StepClock(0, 1),))) == "steps a clock"


def test_a_broker_by_address_declines_crash_histories_and_the_brokers_ktc_starts_run_them():
    assert "not ktc's to kill" in Address.cannot_restart
    for target in (KAFKA, KFAKE, TANSU):
        cannot_run = target.implementation({}, {}).capabilities().cannot_run
        assert cannot_run is None or cannot_run(CRASHING) is None, target.name


def test_tansu_comes_back_empty_and_says_why_while_kfake_and_kafka_keep_their_data():
    """What a Crash waits for (judge/restart.py): every partition answering again, unless the launcher says its
    broker forgets (then any answer will do, and what it answers of the lost partitions is judged)."""
    assert "memory storage" in Tansu.restart_forgets
    assert all(getattr(launcher, "restart_forgets", None) is None for launcher in (Kfake, LocalKafka))


def test_kfake_s_command_names_its_data_directory_and_no_fsync_per_batch(tmp_path):
    command = KfakeBroker(port=9, data_dir=tmp_path).command(Path("kfake"))
    assert command[command.index("-data-dir") + 1] == str(tmp_path) and "-sync-writes" not in command
    assert "-data-dir" not in KfakeBroker().command(Path("kfake"))


def test_the_clock_runs_forward_while_a_broker_restarts_and_is_verified_again_after(tmp_path):
    clock = ControlledClock(Path("ktcclock.so"), directory=tmp_path, start_ms=1_000)
    echoes = []
    clock.observe = lambda: echoes.append(clock.now()) or clock.now()
    with running(clock):
        time.sleep(0.1)
        assert clock.observe is None
    assert clock.now() >= 1_100 and clock.observe is not None
    assert echoes == [clock.now()]  # only the setting after the restart is echoed
    clock.remove()


class Restarting:
    """A pipeline whose Crash took the broker's clock from 100 to 350."""

    def crash(self, partitions):
        self.partitions = partitions
        return Observed(Ack(), 100, 350)


def test_a_driven_history_goes_on_from_where_the_restart_left_its_clock():
    run = HistoryRun(CRASHING, {"t": "ktc-t"}, ("127.0.0.1", 9))
    run.configs["t"], run.clock_shift = CRASHING.ops[0].config, 7
    pipeline = Restarting()
    assert run.crash(pipeline) == Observed(Ack(), 100, 350)
    assert run.clock_shift == 257 and pipeline.partitions == [("ktc-t", 0)]
