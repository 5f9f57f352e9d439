"""The real-time tier on a broker started by hand (benchmarks/hand_started_kafka.sh, not ktc's broker class),
checking every second, judged directly and through planted faults (realtime_faults.py, via faultproxy.py):
a healthy broker fails neither safety nor liveness, a log start that jumps early fails safety, a deletion
never shown fails liveness.  The three tiers run at once on the one broker (each its own topics, its own
proxy): each mostly waits for the broker's retention passes, so together they take the time of the longest."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("psutil", reason="the broker tier needs psutil (pip install psutil)")

from ktc.implementations.families.bootstrap import TARGET as BY_ADDRESS  # noqa: E402
from ktc.implementations.kafka.adapter import BrokerAdapter  # noqa: E402
from ktc.implementations.kafka.settings import ByAddress  # noqa: E402
from ktc.judge import realtime  # noqa: E402
from ktc.kafka.client.security import PLAINTEXT  # noqa: E402
from ktc.kafka.processes import provision  # noqa: E402
from ktc.reports.verdicts import Validity  # noqa: E402

from .faultproxy import FaultProxy  # noqa: E402
from .realtime_faults import EARLY, HIDDEN  # noqa: E402

pytestmark = pytest.mark.xdist_group("broker-real-time-by-hand")  # the module on one worker: its fixtures once
SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "hand_started_kafka.sh"
BUDGET_S = 120.0


def free_pair() -> int:
    """A port whose successor is free too (the script puts the controller there)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
        return port
    raise RuntimeError("no two consecutive free ports")


@pytest.fixture(scope="module")
def by_hand(tmp_path_factory):
    """A broker started as a user would, checking retention every second; stopped by its pid."""
    version, port, folder = provision.DEFAULT_VERSIONS[0], free_pair(), tmp_path_factory.mktemp("by-hand")
    env = {**os.environ, "KAFKA_LIB": str(provision.lib_dir(version))}
    started = subprocess.run(
        [str(SCRIPT), version, str(port), str(folder), "log.retention.check.interval.ms=1000"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    pid_file = folder / "broker.pid"
    try:
        assert started.returncode == 0, started.stderr + started.stdout
        yield ("127.0.0.1", port)
    finally:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


def tier(address: str) -> list:
    impl = BrokerAdapter(BY_ADDRESS, ByAddress(address, PLAINTEXT, real_time_s=BUDGET_S))
    try:
        judged, timing, how = realtime.over_real_time(impl.over_real_time(), impl.profile())
    finally:
        impl.close()
    assert timing.interval_ms == 1000, how
    return [v for _, verdicts in judged for v in verdicts]


def through(proxy_rule, target) -> list:
    with FaultProxy(target) as proxy:
        proxy.rewrite(proxy_rule)
        return tier(proxy.bootstrap)


def failures(verdicts: list, word: str) -> list:
    return [v for v in verdicts if v.validity is Validity.FAIL and word in v.mismatch.what]


@pytest.fixture(scope="module")
def judged(by_hand) -> dict:
    """Each tier's verdicts, or what it raised (re-raised by the test that reads it): healthy, early, hidden."""
    address = f"{by_hand[0]}:{by_hand[1]}"
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {
            "healthy": pool.submit(tier, address),
            "early": pool.submit(through, EARLY, by_hand),
            "hidden": pool.submit(through, HIDDEN, by_hand),
        }
        return {name: future.exception() or future.result() for name, future in futures.items()}


def verdicts_of(judged: dict, name: str) -> list:
    if isinstance(judged[name], BaseException):
        raise judged[name]
    return judged[name]


def test_a_healthy_broker_by_hand_passes_every_clause_over_real_time(judged):
    verdicts = verdicts_of(judged, "healthy")
    assert {v.validity for v in verdicts} == {Validity.PASS}, [v for v in verdicts if v.validity is not Validity.PASS]
    assert {v.clause for v in verdicts} == set(realtime.realtime_plan.CLAUSES)


def test_a_log_start_that_jumps_a_segment_early_fails_safety(judged):
    verdicts = verdicts_of(judged, "early")
    assert failures(verdicts, "safety"), verdicts
    assert not failures(verdicts, "liveness")


def test_a_broker_that_hides_every_deletion_fails_liveness(judged):
    verdicts = verdicts_of(judged, "hidden")
    assert failures(verdicts, "liveness"), verdicts
    assert not failures(verdicts, "safety")
