"""What the Kafka families' plug-ins share: their options and checks, the clock line, ``ktc clean``.

Everything here works through ktc's Kafka toolkit (ktc/kafka/), imported when used, so listing the
families' options costs nothing and a plain install gets one line, not a traceback, when a part is missing.
"""

from __future__ import annotations

import os
from pathlib import Path

from ktc.implementations.protocol import Option, SettingError


def known_release(version: str) -> None:
    """An unknown Kafka version is answered from Maven Central's metadata, in one request, before any work."""
    from ktc.kafka.processes.provision import ProvisionError, check_release
    from ktc.specs.versions import VersionError, line_of

    try:
        line_of(version)
        check_release(version)
    except (ProvisionError, VersionError) as error:
        raise SettingError(f"--kafka-version {version}: {error}") from None


def known_clock(mode: str) -> None:
    """A clock choice (--kafka-clock, or its default $KTC_KAFKA_CLOCK) is checked before any work."""
    from ktc.implementations.kafka.settings import ClockChoiceError, clock_mode

    try:
        clock_mode(mode)
    except ClockChoiceError as error:
        raise SettingError(str(error)) from None


def use_config(path: str) -> str:
    """Check the TLS/SASL client properties now, and hand them to every connection (and the pytest
    child, its workers included) through KTC_KAFKA_CONFIG."""
    from ktc.kafka.client.security import ENV_VARIABLE, Security, SecurityError

    try:
        security = Security.from_properties(path)
    except SecurityError as error:
        raise SettingError(f"--kafka-config: {error}") from None
    os.environ[ENV_VARIABLE] = str(Path(path).resolve())
    return f"connecting with {security.describe()}"


def reachable(address: str) -> None:
    from ktc.kafka.reach import Unreachable
    from ktc.kafka.reach import reachable as ask

    try:
        ask(address)
    except Unreachable as error:
        raise SettingError(str(error)) from None


def dry_run(parser) -> None:
    """``--dry-run`` of ``ktc clean``, added once whichever family's part adds it first."""
    if "--dry-run" not in parser._option_string_actions:
        parser.add_argument("--dry-run", action="store_true", help="list what would go, remove nothing")


KAFKA_VERSION = Option(
    "--kafka-version",
    "for --impl kafka / kafka-cluster / kafka-container: the Apache Kafka "
    "version to fetch and start (default $KTC_KAFKA_VERSION)",
    env="KTC_KAFKA_VERSION",
    metavar="VERSION",
    check=known_release,
)
KAFKA_BOOTSTRAP = Option(
    "--kafka-bootstrap",
    "for --impl kafka: an existing broker (default $KAFKA_BOOTSTRAP_SERVERS)",
    env="KAFKA_BOOTSTRAP_SERVERS",
    metavar="HOST:PORT",
    check=reachable,
)


def budget(value: str) -> None:
    """A --real-time budget (``12m``, ``90s``, ``1h``, seconds) is checked before any work."""
    from ktc.implementations.kafka.settings import BudgetError, budget_s

    try:
        budget_s(value)
    except BudgetError as error:
        raise SettingError(str(error)) from None


REAL_TIME = Option(
    "--real-time",
    "for --kafka-bootstrap: judge retention and rolling (7 KIP-32/KIP-33 clauses: retention by last timestamp, "
    "segment-level, mtime fallback, future timestamps pinning it, rolls by first timestamp and frozen by a "
    "future one, ListOffsets after retention) over real time, waiting at most BUDGET (e.g. 12m) for the "
    "broker's own retention passes on a worker of its own: 4 to 8 minutes at Kafka's default "
    "log.retention.check.interval.ms of 5 minutes, under a minute at 1 s; without it those clauses are "
    "unsupported (default $KTC_REAL_TIME)",
    env="KTC_REAL_TIME",
    metavar="BUDGET",
    check=budget,
)
KAFKA_CONFIG = Option(
    "--kafka-config",
    "for --kafka-bootstrap: client properties for TLS/SASL (security.protocol, "
    "sasl.mechanism, sasl.username, sasl.password, ssl.ca.location, ...; default $KTC_KAFKA_CONFIG)",
    env="KTC_KAFKA_CONFIG",
    metavar="FILE",
    pytest=False,
    check=use_config,
)
KAFKA_CLOCK = Option(
    "--kafka-clock",
    "for the brokers ktc starts: 'controlled' (default; ktc's preload sets the "
    "broker's clock and judges at it) or 'host' (judged over [sent, received]); default "
    "$KTC_KAFKA_CLOCK",
    env="KTC_KAFKA_CLOCK",
    choices=("controlled", "host"),
    check=known_clock,
)


def target_env(target) -> dict:
    """Replay on the broker the result came from: the same address, or the same release started again."""
    if target.get("bootstrap"):
        return {"KAFKA_BOOTSTRAP_SERVERS": target["bootstrap"]}
    return {"KTC_KAFKA_VERSION": target["version"]} if target.get("version") else {}


def clock_line(target) -> str | None:
    """A broker's clock at the run's end (the target's ``clock``), or None for a target without one."""
    return describe_clock(target["clock"]) if target.get("clock") else None


def describe_clock(clock: dict) -> str:
    """The broker's clock in one line: set by ktc and verified (how often, how fast seen), or why not."""
    if not clock.get("controlled"):
        host = f"clock: the host's, operations judged over [sent, received] ({clock.get('reason')})"
        return host + leaders_part(clock)
    if not clock.get("checks"):
        return "clock: controlled by ktc, never set by a history"
    return (
        f"clock: controlled by ktc, {clock['checks']} settings checked by a LogAppendTime echo, "
        f"{clock['failures']} not echoed; a setting seen in {clock['median_seen_ms']:.1f} ms "
        f"(median), {clock['max_seen_ms']:.1f} ms (max){stalls_part(clock)}{retention_part(clock)}"
    )


def stalls_part(clock: dict) -> str:
    """Times the broker stopped echoing between histories and came back once its clock ran (processes/clock.py)."""
    stalls = clock.get("stalls_recovered")
    return f"; {stalls} stalls between histories recovered by letting the clock run" if stalls else ""


def retention_part(clock: dict) -> str:
    """The broker's retention passes a history asked for, and what one took (judge/retention.py)."""
    if not clock.get("retention_passes"):
        return ""
    return (
        f"; {clock['retention_passes']} retention passes run by the broker, "
        f"{clock['retention_median_ms']:.0f} ms each (median), {clock['retention_max_ms']:.0f} ms (max)"
    )


def leaders_part(clock: dict) -> str:
    """What --move-leaders did (implementations/kafka/moves/): the moves, each node's measured clock, or why none."""
    moves = clock.get("leader_moves")
    if not moves:
        return ""
    if moves.get("refused"):
        return f"; leaders not moved: {moves['refused']}"
    from ktc.implementations.kafka.moves.clocks import describe

    return f"; {moves['moves']} leader moves in {moves['histories']} histories; {describe(moves)}"
