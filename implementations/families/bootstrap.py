"""Any Kafka-compatible broker by address: ``--impl kafka --kafka-bootstrap HOST:PORT`` (implementations/kafka/
launch.py: ``Address``), its profile discovered (ktc/kafka/discovery.py) unless given, its answers probed before
the first history, and ``ktc clean`` of ktc's topics there."""

from __future__ import annotations

import os
import sys

from ktc.implementations.families._kafka import (
    KAFKA_BOOTSTRAP,
    KAFKA_CONFIG,
    REAL_TIME,
    clock_line,
    dry_run,
    reachable,
    target_env,
    use_config,
)
from ktc.implementations.kafka.settings import ByAddress
from ktc.implementations.kafka.target import BrokerTarget, Discovered
from ktc.implementations.protocol import Command, Option, Plugin

TARGET = BrokerTarget(
    name="kafka",
    settings=ByAddress.from_options,
    start="ktc.implementations.kafka.launch:Address",
    profile=Discovered(),
    probes=True,
    runs="ktc.implementations.kafka.moves.run:executor",  # the pipeline, and with --move-leaders leader changes
)
MOVE_LEADERS = Option(
    "--move-leaders",
    "for --kafka-bootstrap on a cluster of 2+ brokers: move the leadership of ktc's own topics (never another "
    "topic's; AlterPartitionReassignments + ElectLeaders, needs ALTER on CLUSTER) to judge LogAppendTime across "
    "leader changes on the clocks the cluster has, their skew measured from LogAppendTime echoes and reported. "
    "Costs about a second per leader change (a few hundred histories with one: minutes)",
    switch=True,
)


def serves(spec: str, values) -> bool:
    return spec == "kafka" and bool(values.get("kafka_bootstrap"))


def own_profile(spec: str, values, requested: str) -> str:
    """What discovery makes of the broker, in words.  With --profile given nothing more is asked; a
    question the broker does not answer is a note in the line, never a refusal."""
    address = values["kafka_bootstrap"]
    if requested not in ("own", "all"):
        return f"{address} judged as {requested} (given with --profile)" + leaders_line(values)
    from ktc.kafka.client import wire
    from ktc.kafka.discovery import discover

    with wire.Client(address, timeout_s=10.0) as client:
        found = discover(client)
    line = f"{address} judged as {found.profile} (detected: {found.evidence})"
    return line + leaders_line(values)


def leaders_line(values) -> str:
    """With --move-leaders, whether leadership can move at the address: a second line."""
    if not values.get("move_leaders"):
        return ""
    from ktc.implementations.kafka.moves.survey import line

    return "\nktc: " + line(values["kafka_bootstrap"])


def clean_arguments(parser) -> None:
    parser.add_argument(
        "--kafka-bootstrap",
        default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS"),
        metavar="HOST:PORT",
        help="the broker (default $KAFKA_BOOTSTRAP_SERVERS)",
    )
    parser.add_argument(
        "--kafka-config",
        default=os.environ.get("KTC_KAFKA_CONFIG"),
        metavar="FILE",
        help="client properties for TLS/SASL (as for ktc run)",
    )
    dry_run(parser)


def clean(args) -> int | None:
    """Delete every ktc topic on the broker (names only ktc makes: ktc/kafka/topics.py's OWN_TOPIC)."""
    if not args.kafka_bootstrap:
        return None
    if args.kafka_config:
        print(f"ktc: {use_config(args.kafka_config)}", file=sys.stderr)
    reachable(args.kafka_bootstrap)
    from ktc.kafka.clean import delete_own

    own, others, failed = delete_own(args.kafka_bootstrap, dry_run=args.dry_run)
    verb = "would delete" if args.dry_run else "deleted"
    print(
        f"ktc clean: {verb} {own - len(failed)} ktc topics on {args.kafka_bootstrap}; left {others} other topics alone"
    )
    for name, code in sorted(failed.items()):
        print(f"ktc clean: {name}: DeleteTopics error {code}", file=sys.stderr)
    return 1 if failed else 0


CLEAN = Command(
    "clean",
    "delete the topics killed ktc runs left on a broker (only ktc's own)",
    clean_arguments,
    clean,
    needs="--kafka-bootstrap HOST:PORT (or KAFKA_BOOTSTRAP_SERVERS)",
)

PLUGIN = Plugin(
    family="bootstrap",
    description="any Kafka-compatible broker you run, by address: --kafka-bootstrap HOST:PORT (TLS/SASL: "
    "--kafka-config)",
    builtins={"kafka": TARGET},
    named="kafka --kafka-bootstrap HOST:PORT",
    options=(KAFKA_CONFIG, KAFKA_BOOTSTRAP, REAL_TIME, MOVE_LEADERS),
    serves=serves,
    own_profile=own_profile,
    replay_env=target_env,
    summary=clock_line,
    commands=(CLEAN,),
)
