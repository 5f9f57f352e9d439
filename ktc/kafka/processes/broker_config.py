"""What a local broker (broker.py) is started with, written as files and a command line: its
``server.properties`` (combined broker and controller on loopback, a static quorum of one, ktc's defaults for a
throwaway broker, the frozen clock's settings, a SASL_SSL listener, then the caller's config), its logging
configuration (reload4j before Kafka 4, log4j2 from 4), and the ``java`` command of the broker and of
StorageTool.  Plain functions of the values they need: broker.py holds the process and its lifecycle."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import class_archive, provision, tls
from .clock import FROZEN_CLOCK_CONFIG

# The client compiler alone and the serial collector, for the broker and StorageTool: a test broker lives a
# few minutes, mostly compiling and collecting a small heap.  For the broker, kafka-4.4.0 judged alone at the
# dev profile: its JVM's CPU 29 -> 17 s, test time 26 -> 25 s (benchmarks/README.md).  StorageTool's format
# runs for a second and exits ~1.5 s sooner (3.0 -> 1.4 s on 3.9.2, 3.6 -> 2.1 s on 4.4.0).
JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
LOG_PATTERN = "[%d] %p %m (%c)%n"
# Loggers that write INFO lines for every topic and partition created, configured or deleted (about 18 lines and
# 5 KB a history of the bulk runs, each line formatted and written by the thread that applies the change): WARN,
# so errors still reach logs/server.log.  Everything else stays at INFO.
QUIET_LOGGERS = (
    "kafka.request.logger",
    "state.change.logger",
    "kafka.cluster.Partition",
    "kafka.log",
    "org.apache.kafka.storage.internals.log",
    "kafka.server.metadata.DynamicConfigPublisher",
    "org.apache.kafka.controller.ConfigurationControlManager",
    "org.apache.kafka.controller.ReplicationControlManager",
)


def server_properties(
    node_id: int,
    ports: tuple[int, int],
    data_dir: Path,
    version: str,
    *,
    frozen_clock: bool = False,
    listener: tuple[tls.SecureListener, tls.TlsFiles] | None = None,
    config: Mapping[str, object] = {},
) -> dict[str, object]:
    """``ports``: the client and controller ports; ``listener``: a SASL_SSL listener and its files, added
    beside the plaintext one; ``config`` last, so the caller's keys win."""
    port, controller_port = ports
    props: dict[str, object] = {
        "process.roles": "broker,controller",
        "node.id": node_id,
        "controller.quorum.voters": f"{node_id}@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": data_dir,
        **THROWAWAY,
    }
    if provision.major(version) >= 4:
        props.update(
            {"share.coordinator.state.topic.replication.factor": 1, "share.coordinator.state.topic.min.isr": 1}
        )
    if frozen_clock:
        props.update(FROZEN_CLOCK_CONFIG)
    if listener is not None:
        props = tls.listener_properties(props, *listener)
    props.update(config)
    return props


# A broker of one node that holds throwaway data: internal topics of one replica, no topic created by a read,
# retention checked every second and deleted at once, no compaction, no metric registered as a JMX MBean (its
# metrics are still kept; nothing of ktc reads JMX, and a partition's dozen MBeans were registered and removed
# by the thread that creates and deletes it: bulk agreement's broker CPU a scenario 2.9 -> 2.6 ms on 3.9.2).
THROWAWAY: dict[str, object] = {
    "num.partitions": 1,
    "auto.create.topics.enable": "false",
    "offsets.topic.replication.factor": 1,
    "offsets.topic.num.partitions": 1,
    "transaction.state.log.replication.factor": 1,
    "transaction.state.log.min.isr": 1,
    "transaction.state.log.num.partitions": 1,
    "group.initial.rebalance.delay.ms": 0,
    "log.retention.check.interval.ms": 1000,
    "log.initial.task.delay.ms": 0,
    "log.segment.delete.delay.ms": 0,
    "log.cleaner.enable": "false",
    "metrics.jmx.exclude": ".*",
}


# Kafka 4's share groups keep their state in an internal topic: one replica on a broker of one node.
SHARE_COORDINATOR = {"share.coordinator.state.topic.replication.factor": 1, "share.coordinator.state.topic.min.isr": 1}


def write_files(tmpdir: Path, version: str, properties: Mapping[str, object]) -> None:
    """``server.properties`` and the logging configuration of ``version`` (to ``logs/server.log``)."""
    (tmpdir / "server.properties").write_text("".join(f"{k}={v}\n" for k, v in properties.items()))
    log = tmpdir / "logs" / "server.log"
    if provision.logging_family(version) == "reload4j":
        (tmpdir / "log4j.properties").write_text(reload4j_config(log))
    else:
        (tmpdir / "log4j2.xml").write_text(log4j2_config(log))


def reload4j_config(log: Path) -> str:
    return (
        "log4j.rootLogger=INFO, file\n"
        "log4j.appender.file=org.apache.log4j.FileAppender\n"
        f"log4j.appender.file.File={log}\n"
        "log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"
        f"log4j.appender.file.layout.ConversionPattern={LOG_PATTERN}\n"
        + "".join(f"log4j.logger.{name}=WARN\n" for name in QUIET_LOGGERS)
    )


def log4j2_config(log: Path) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<Configuration status="WARN">\n'
        f'  <Appenders><File name="file" fileName="{log}">'
        f'<PatternLayout pattern="{LOG_PATTERN}"/></File></Appenders>\n'
        "  <Loggers>\n"
        + "".join(f'    <Logger name="{name}" level="WARN"/>\n' for name in QUIET_LOGGERS)
        + '    <Root level="INFO"><AppenderRef ref="file"/></Root></Loggers>\n'
        "</Configuration>\n"
    )


def java_command(tmpdir: Path, version: str, heap: str, lib: Path, main: str, *args: str) -> list[str]:
    """``java`` running ``main`` from the jars in ``lib``, its logs, temp files and natives under ``tmpdir``."""
    if provision.logging_family(version) == "reload4j":
        logging = [f"-Dlog4j.configuration=file:{tmpdir / 'log4j.properties'}"]
    else:
        logging = [f"-Dlog4j2.configurationFile={tmpdir / 'log4j2.xml'}"]
    return [
        "java",
        f"-Xmx{heap}",
        "-Xss1m",
        *JVM_FLAGS,
        *class_archive.flags(lib),
        "-Djava.awt.headless=true",
        f"-Dkafka.logs.dir={tmpdir / 'logs'}",
        *logging,
        f"-Djava.io.tmpdir={tmpdir / 'jvm-tmp'}",  # lz4/snappy natives: gone with the folder, not /tmp
        "-cp",
        str(lib / "*"),
        main,
        *args,
    ]
