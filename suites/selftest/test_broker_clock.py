"""The broker clock ktc sets (processes/clock.py, clock_shim.py, judge/clocked.py), no broker.

The preload itself is compiled and run under ``date``: a setting written through the clock's
mapping is what a process preloaded with it reads, to the millisecond.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ktc.implementations.families._kafka import describe_clock
from ktc.implementations.kafka import settings
from ktc.implementations.kafka.judge import clocked
from ktc.implementations.kafka.judge.observe import on_real_time
from ktc.kafka.processes import clock_shim
from ktc.kafka.processes.clock import EARLIEST_MS, LATEST_MS, ClockError, ControlledClock, now_ms
from ktc.reference.types import Ack, Advance, CreateTopic, ElectLeader, History, Produce, StepClock

MS = st.integers(EARLIEST_MS, LATEST_MS)


@pytest.fixture
def clock(tmp_path):
    made = ControlledClock(Path("ktcclock.so"), directory=tmp_path / "clock", start_ms=0)
    yield made
    made.remove()


def stored(clock: ControlledClock) -> int:
    return struct.unpack("=q", clock.path.read_bytes())[0]


# ---- settings --------------------------------------------------------------------------------------


@example(ms=EARLIEST_MS)
@example(ms=LATEST_MS)
@example(ms=1_700_000_000_249)  # a fraction libfaketime's double parse read as .248999...
@given(ms=MS)
def test_a_setting_is_stored_as_the_one_int64_the_preload_reads(tmp_path_factory, ms):
    clock = ControlledClock(Path("ktcclock.so"), directory=tmp_path_factory.mktemp("clock"), start_ms=ms)
    try:
        assert (stored(clock), clock.now(), clock.stamp(ms + 5)) == (ms, ms, ms)
    finally:
        clock.remove()


def test_a_clock_only_planned_makes_no_file_and_a_removed_one_makes_it_again_with_its_setting(tmp_path):
    where = tmp_path / "clock"
    clock = ControlledClock(Path("ktcclock.so"), directory=where, start_ms=5)
    clock.set(7)
    assert not where.exists()  # every worker plans a clock for each broker; one starts it
    assert stored(clock) == 7 and where.is_dir()
    clock.remove()
    assert not where.exists()
    clock.set(9)
    assert stored(clock) == 9  # a broker started again after close reads the clock as set
    clock.remove()


@pytest.mark.parametrize("ms", [EARLIEST_MS - 1, LATEST_MS + 1])
def test_a_setting_outside_1970_to_9999_is_refused_and_the_clock_keeps_its_value(clock, ms):
    clock.set(42)
    with pytest.raises(ClockError, match="outside years 1970..9999"):
        clock.set(ms)
    assert (stored(clock), clock.now()) == (42, 42)


def test_every_setting_is_verified_by_its_echo_and_timed(clock):
    clock.observe = clock.now
    for ms in (10, 5, 2_000):
        clock.set(ms)
    summary = clock.verification.summary()
    assert (summary["checks"], summary["failures"]) == (3, 0)
    assert 0 <= summary["median_seen_ms"] <= summary["max_seen_ms"]


def test_a_setting_the_broker_does_not_echo_is_an_error_and_a_counted_failure(clock):
    clock.observe = lambda: clock.now() + 1
    with pytest.raises(ClockError, match="set to 7 but it echoes 8"):
        clock.set(7)
    assert clock.verification.failures == [(7, 8)]


class Silent:
    """A broker's echo that answers only once its clock has run ``until_ms`` past where it first stood (a broker
    whose controller channel waits out a deadline on the wall clock), each call patient for ``patience_s``."""

    def __init__(self, clock: ControlledClock, until_ms: float, patience_s: float = 1.0):
        self.clock, self.calls, self.patience_s = clock, 0, patience_s
        self.answers_from = clock.now() + until_ms

    def __call__(self) -> int:
        self.calls += 1
        deadline = time.monotonic() + self.patience_s
        while self.clock.now() < self.answers_from:
            if time.monotonic() > deadline:
                raise ClockError("the clock-echo topic answered produce with error 6")
            time.sleep(0.01)
        return self.clock.now()


def test_a_broker_that_stops_echoing_gets_its_clock_running_until_it_echoes_again(clock):
    clock.set(now_ms())
    clock.observe = silent = Silent(clock, until_ms=200)
    clock.resume()
    assert clock.recoveries == 1 and silent.calls == 3  # the frozen try, the one while running, the setting after
    assert clock.now() >= silent.answers_from and clock.verification.failures == []


def test_a_broker_silent_even_with_its_clock_running_fails_every_later_resume_at_once(clock):
    clock.set(now_ms())
    clock.observe = silent = Silent(clock, until_ms=10**12, patience_s=0.2)
    with pytest.raises(ClockError, match="also with its clock running"):
        clock.resume()
    calls = silent.calls
    with pytest.raises(ClockError, match="also with its clock running"):
        clock.resume()
    assert (silent.calls, clock.recoveries) == (calls, 0)


# ---- which histories need the clock alone ----------------------------------------------------------


def history(*ops) -> History:
    return History("kip", (CreateTopic("t"),) + ops)


@pytest.mark.parametrize(
    "ops, alone",
    [
        ((Produce("t", None),), False),
        ((Advance(0),), False),
        ((Advance(1),), True),
        ((StepClock(0, -5),), True),
        ((StepClock(1, -5),), False),  # another broker's clock: a single broker never sees it
        ((Advance(1), ElectLeader("t", 1)), False),  # leader changes belong to the cluster
    ],
)
def test_a_history_runs_alone_exactly_when_its_leader_clock_moves(ops, alone):
    assert clocked.moves_its_clock(history(*ops)) is alone


def test_split_keeps_every_history_once_and_in_order():
    histories = [history(Advance(1)), history(), history(StepClock(0, 3)), history()]
    together, alone = clocked.split(histories)
    assert (together, alone) == ([1, 3], [0, 2])


def test_a_clock_set_back_is_observed_as_a_step_of_broker_0():
    steps = [("a", "ra", 100), ("b", "rb", 100), ("c", "rc", 40), ("d", "rd", 70)]
    ops, results, start = on_real_time(steps)
    assert ops == ("a", "b", StepClock(0, -60), "c", Advance(30), "d")
    assert results == ("ra", "rb", Ack(), "rc", Ack(), "rd") and start == 100


# ---- choosing and describing the clock -------------------------------------------------------------


@pytest.mark.parametrize(
    "value, mode", [("", "controlled"), (None, "controlled"), ("host", "host"), (" controlled ", "controlled")]
)
def test_the_clock_mode_is_the_one_given_else_controlled(value, mode):
    assert settings.clock_mode(value) == mode


def test_an_unknown_clock_mode_is_refused_with_the_choices():
    with pytest.raises(settings.ClockChoiceError, match="KTC_KAFKA_CLOCK='hots': expected one of controlled, host"):
        settings.clock_mode("hots")


@pytest.mark.parametrize(
    "given, environ, mode",
    [
        (None, {}, "controlled"),
        (None, {"KTC_KAFKA_CLOCK": "host"}, "host"),
        ("controlled", {"KTC_KAFKA_CLOCK": "host"}, "controlled"),
    ],
)
def test_a_started_broker_s_clock_is_kafka_clock_else_its_variable(given, environ, mode):
    from ktc import implementations

    values = implementations.values({"kafka_clock": given}, environ)
    assert settings.Started.from_options(values, environ, version="3.9.2").clock == mode


def test_the_host_clock_is_chosen_with_its_reason_when_asked():
    clock, reason = clocked.choose_clock("host")
    assert (clock.exact, reason) == (False, "KTC_KAFKA_CLOCK=host")


def test_the_clock_line_says_how_the_broker_was_judged():
    host = describe_clock({"controlled": False, "reason": "no C compiler"})
    controlled = describe_clock(
        {"controlled": True, "checks": 3, "failures": 0, "median_seen_ms": 1.25, "max_seen_ms": 9.0}
    )
    assert "over [sent, received] (no C compiler)" in host
    assert "3 settings checked by a LogAppendTime echo, 0 not echoed" in controlled and "1.2 ms (median)" in controlled
    assert "stalls" not in controlled
    stalled = describe_clock(
        {
            "controlled": True,
            "checks": 3,
            "failures": 0,
            "median_seen_ms": 1.0,
            "max_seen_ms": 9.0,
            "stalls_recovered": 2,
        }
    )
    assert "2 stalls between histories recovered by letting the clock run" in stalled


# ---- the preload ---------------------------------------------------------------------------------


def test_a_process_under_the_preload_reads_the_setting_to_the_millisecond(tmp_path, monkeypatch):
    if not any(shutil.which(name) for name in clock_shim.COMPILERS):
        pytest.skip("no C compiler: the controlled clock falls back to the host's (and says so)")
    monkeypatch.setenv("KTC_CACHE", str(tmp_path / "cache"))
    clock = ControlledClock(clock_shim.build(), directory=tmp_path / "clock", start_ms=1_700_000_000_249)
    try:
        first = subprocess.run(["date", "+%s%3N"], env=clock.environment(), capture_output=True, text=True)
        clock.set(LATEST_MS)
        last = subprocess.run(["date", "-u", "+%Y %s%3N"], env=clock.environment(), capture_output=True, text=True)
    finally:
        clock.remove()
    assert (first.stdout.strip(), last.stdout.strip()) == ("1700000000249", f"9999 {LATEST_MS}")


def test_a_broker_config_a_frozen_clock_cannot_live_with_falls_back_to_the_host_clock_and_says_why():
    clock, reason = clocked.choose_clock("controlled", {"connections.max.idle.ms": "1000"})
    assert clock.exact is False and "connections.max.idle.ms is set" in reason


def test_a_clock_says_where_it_stands_against_the_hosts_for_a_run_that_did_not_return(clock):
    week_ms = 7 * 86_400_000
    clock.set(now_ms() + week_ms)
    ahead = clock.describe()
    clock.set(now_ms() - week_ms)
    assert "604800 s ahead of the host's" in ahead and "604800 s behind the host's" in clock.describe()
