"""``kafka-container``: Apache Kafka in a container (implementations/kafka/containers/launch.py), judged as the
broker ktc starts locally is; and ``ktc clean --containers`` of what killed runs left."""

from __future__ import annotations

from ktc.implementations.families._kafka import KAFKA_VERSION, clock_line, dry_run, target_env
from ktc.implementations.kafka.settings import Container
from ktc.implementations.kafka.target import BrokerTarget, ReleaseLine
from ktc.implementations.protocol import Command, Plugin

TARGET = BrokerTarget(
    name="kafka-container",
    settings=Container.from_options,
    start="ktc.implementations.kafka.containers.launch:Container",
    profile=ReleaseLine(),
    kafka_changes=True,
)


def clean_arguments(parser) -> None:
    parser.add_argument(
        "--containers",
        action="store_true",
        help="remove the containers and the Docker engine ktc started that killed runs left",
    )
    dry_run(parser)


def clean(args) -> int | None:
    """What killed runs of the container tier left (implementations/kafka/containers/clean.py)."""
    if not args.containers:
        return None
    from ktc.implementations.kafka.containers.clean import clean as remove

    for line in remove(args.dry_run):
        print(f"ktc clean: {line}")
    return 0


CLEAN = Command(
    "clean", "remove the containers and Docker engine killed runs left", clean_arguments, clean, needs="--containers"
)

PLUGIN = Plugin(
    family="container",
    description="Apache Kafka in a container (apache/kafka, else ktc/kafka from the cached jars) on your Docker "
    "engine or a dockerd ktc starts",
    builtins={"kafka-container": TARGET},
    options=(KAFKA_VERSION,),
    replay_env=target_env,
    summary=clock_line,
    commands=(CLEAN,),
)
