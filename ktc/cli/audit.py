"""``ktc audit``: read a topic (Spark's Kafka source, ktc's client, or a Parquet/Delta export), check
every clause decidable from stored data, write audit.txt / audit.json / audit.html and the violating
rows as Parquet.  Every option, the broker, the topic and its configs are checked before Spark
starts; a bad one is one line and exit 2.  Exit 1 when a check the profile promises fails."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

from ktc.cli.common import UsageError, reachable
from ktc.usage import report_root

SOURCES = ("kafka", "ktc")


def add_parser(sub) -> None:
    a = sub.add_parser("audit", help="check a topic's stored data against the timestamp clauses its config promises")
    a.add_argument("--topic", action="append", required=True, help="topic to audit (repeatable)")
    a.add_argument(
        "--kafka-bootstrap",
        default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS"),
        metavar="HOST:PORT",
        help="the broker (default $KAFKA_BOOTSTRAP_SERVERS); with a file source, used for configs and ListOffsets only",
    )
    a.add_argument(
        "--kafka-config",
        default=os.environ.get("KTC_KAFKA_CONFIG"),
        metavar="FILE",
        help="client properties for TLS/SASL, as for ktc run (default $KTC_KAFKA_CONFIG); the Spark "
        "Kafka source gets the same settings as kafka.* options",
    )
    a.add_argument(
        "--source",
        default="kafka",
        metavar="kafka|ktc|PATH",
        help="kafka: Spark's Kafka source (default); ktc: ktc's client, with batch headers and leader "
        "epochs; PATH: a Parquet/Delta export with the Kafka source's columns",
    )
    a.add_argument(
        "--profile",
        help="judge under this profile (default: the broker's release line, found by "
        "discovery; kafka-4 for a file without a broker)",
    )
    a.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a topic config, over what DescribeConfigs says (repeatable; message.timestamp.*, compression.type)",
    )
    a.add_argument(
        "--samples", type=count_arg("--samples"), default=32, help="ListOffsets targets per partition (default 32)"
    )
    a.add_argument("--seed", type=count_arg("--seed"), help="seed for the sampled targets (default: random, printed)")
    a.add_argument(
        "--clock-skew-ms",
        type=count_arg("--clock-skew-ms"),
        default=0,
        help="how far the broker's clock may run ahead of this machine's (default 0)",
    )
    a.add_argument("--report", default="ktc-report", metavar="DIR", help="report root (default ./ktc-report)")
    a.add_argument("--spark-master", help="Spark master URL (default local[*])")


def count_arg(flag: str):
    def parse(value: str) -> int:
        if not value.isdigit():
            raise UsageError(f"{flag} {value!r}: expected a whole number >= 0")
        return int(value)

    return parse


@dataclass
class Plan:
    topics: list[str]
    source: str
    bootstrap: str | None
    profile: str
    configs: dict[str, dict[str, str | None]]
    samples: int
    seed: int
    skew_ms: int
    report: Path
    spark_master: str | None
    profile_note: str = ""
    kafka_unavailable: str | None = None  # why Spark's Kafka source could not be loaded (ktc's client reads)


def cmd_audit(args) -> int:
    plan = checked_plan(args)
    print(
        f"ktc audit: {', '.join(plan.topics)} from {plan.source}, profile {plan.profile}{plan.profile_note}; "
        f"seed {plan.seed}",
        flush=True,
    )
    from ktc.cli import audit_run

    return audit_run.run(plan)


def checked_plan(args) -> Plan:
    """Every option checked, the broker asked, before any Spark starts."""
    needs_spark()
    source = checked_source(args.source, args.kafka_bootstrap)
    overrides = config_pairs(args.config)
    use_security(args.kafka_config)
    if args.kafka_bootstrap:
        reachable(args.kafka_bootstrap)
    profile, note = chosen_profile(args.profile, args.kafka_bootstrap)
    configs = {t: {**broker_configs(args.kafka_bootstrap, t, source), **overrides} for t in args.topic}
    seed = random.randrange(2**31) if args.seed is None else args.seed
    return Plan(
        args.topic,
        source,
        args.kafka_bootstrap,
        profile,
        configs,
        args.samples,
        seed,
        args.clock_skew_ms,
        report_root(args.report),
        args.spark_master,
        note,
    )


def needs_spark() -> None:
    """The audit counts with Spark, whatever the source: without it, one line that says what to install."""
    import importlib.util

    try:
        found = importlib.util.find_spec("pyspark") is not None  # looked for, not imported (audit_run imports it)
    except ValueError:  # known to be missing (sys.modules holds None for it)
        found = False
    if not found:
        raise UsageError("ktc audit needs Spark: pip install 'ktc[spark]' (and Java 17)")


def use_security(path: str | None) -> None:
    """Every client of this process (ktc's and, through kafka.* options, Spark's) uses ``path``'s settings."""
    if not path:
        return
    from ktc.kafka.client.security import ENV_VARIABLE, Security, SecurityError

    try:
        Security.from_properties(path)
    except SecurityError as error:
        raise UsageError(f"--kafka-config: {error}") from None
    os.environ[ENV_VARIABLE] = os.path.abspath(path)


def checked_source(value: str, bootstrap: str | None) -> str:
    if value in SOURCES:
        if not bootstrap:
            raise UsageError(
                f"--source {value} reads a broker: give --kafka-bootstrap HOST:PORT "
                "(or --source PATH for a Parquet/Delta export)"
            )
        return value
    if not Path(value).exists():
        raise UsageError(f"--source {value!r}: expected kafka, ktc or an existing Parquet/Delta path")
    return str(Path(value).resolve())


def config_pairs(pairs: list[str]) -> dict[str, str]:
    from ktc.audit.facts import CONFIG_KEYS

    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in CONFIG_KEYS:
            raise UsageError(f"--config {pair!r}: expected KEY=VALUE with KEY one of {', '.join(CONFIG_KEYS)}")
        out[key] = value
    return out


def chosen_profile(given: str | None, bootstrap: str | None) -> tuple[str, str]:
    from ktc.specs.profiles import names

    if given is not None:
        if given not in names():
            raise UsageError(f"--profile {given!r}: expected one of {', '.join(names())}")
        return given, ""
    if not bootstrap:
        return "kafka-4", " (no broker to ask: --profile names another)"
    from ktc.kafka.client import wire
    from ktc.kafka.discovery import discover

    with wire.Client(bootstrap) as client:
        found = discover(client)
    if found.profile is None:
        raise UsageError(f"{bootstrap}: no profile matches this broker ({found.evidence}); pass --profile")
    return found.profile, f" (discovered: {found.evidence})"


def broker_configs(bootstrap: str | None, topic: str, source: str) -> dict[str, str | None]:
    """The topic's timestamp configs by DescribeConfigs; an unknown topic is a usage error."""
    if not bootstrap:
        return {}
    from ktc.audit.facts import CONFIG_KEYS
    from ktc.kafka.client import wire

    with wire.Client(bootstrap) as client:
        code, message, entries = client.describe_topic_configs(topic)
    if code == 3:
        raise UsageError(f"--topic {topic!r}: no such topic on {bootstrap}")
    if code:
        raise UsageError(f"--topic {topic!r}: {bootstrap} answered DescribeConfigs with error {code} ({message})")
    return {k: entries[k].value for k in CONFIG_KEYS if k in entries}


COMMANDS = {"audit": cmd_audit}
