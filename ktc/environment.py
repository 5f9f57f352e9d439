"""Every environment variable ktc reads, with what it means: the one list.  ``ktc env`` prints it, and
``ktc --help`` points there.  suites/selftest/test_environment.py holds the code to it: a variable read
anywhere in ktc's code (or named in its code and documents) is a row here, and a row names a variable the
code reads.

Settings are typed and passed explicitly inside ktc (a broker target's settings: implementations/kafka/
settings.py); a variable is where one enters from outside, and only where an option would not do:

- ``option``: the default of a ``ktc run`` option (and of its pytest option), read by the option table
  (``Option.env``, implementations/__init__.py ``values``), so a CI job or a replay line sets it once;
- ``setting``: a knob with no option (a build, a binary, a cache), read once where its setting is made;
- ``boundary``: ktc sets it for a process it starts, where no argument reaches (the pytest child and its
  xdist workers, the broker's JVM, a copy of the tree);
- ``world``: what the machine says (a CI, a terminal, Docker, Java);
- ``suites`` / ``tools``: ktc's own test suites and the clone's tools (mutation/), not a run's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

KINDS = {
    "option": "defaults of options",
    "setting": "settings without an option",
    "boundary": "set by ktc for a process it starts",
    "world": "read from the machine",
    "suites": "ktc's own test suites",
    "tools": "the clone's tools (mutation/)",
}


@dataclass(frozen=True)
class Variable:
    name: str
    kind: str
    meaning: str


VARIABLES = (
    Variable(
        "KTC_KAFKA_VERSION",
        "option",
        "--kafka-version: the Apache Kafka release --impl kafka, kafka-cluster and "
        "kafka-container start (replay lines set it)",
    ),
    Variable(
        "KAFKA_BOOTSTRAP_SERVERS",
        "option",
        "--kafka-bootstrap: a broker judged by address (ktc run, ktc clean, ktc hunt, ktc audit)",
    ),
    Variable(
        "KTC_REAL_TIME",
        "option",
        "--real-time: the time budget (12m, 90s) of the real-time tier on a broker judged by address: "
        "retention and rolling judged over the broker's own retention passes",
    ),
    Variable(
        "KTC_KAFKA_CONFIG",
        "option",
        "--kafka-config: TLS/SASL client properties; its check exports it, so "
        "every connection of the run (the pytest child and its workers too) speaks as it says",
    ),
    Variable(
        "KTC_KAFKA_CLOCK",
        "option",
        "--kafka-clock: 'controlled' (default) or 'host', how the brokers ktc starts are judged",
    ),
    Variable(
        "KTC_CACHE",
        "setting",
        "ktc's cache (default ~/.cache/ktc): Kafka's jars, kfake builds, the clock "
        "preload, Spark's connector and class archive, the container images and the Docker engines ktc starts",
    ),
    Variable("KTC_KAFKA_BROKER_CONFIG", "setting", "key=value,key=value: more settings for the brokers ktc starts"),
    Variable("KTC_KAFKA_DATA_DIR", "setting", "'disk': the local broker's data on disk, not tmpfs"),
    Variable(
        "KTC_KAFKA_CLASS_ARCHIVE",
        "setting",
        "'off': the brokers ktc starts load their classes without their release's class archive",
    ),
    Variable("KTC_KAFKA_CHUNK", "setting", "histories per CreateTopics request on a broker (default 128)"),
    Variable("KTC_KAFKA_CONNECTIONS", "setting", "connections for a broker's operations (default 4)"),
    Variable("KTC_KAFKA_DEPTH", "setting", "operations in flight per connection (default 2)"),
    Variable("KTC_KAFKA_READY_S", "setting", "seconds new partitions have to answer (default 60)"),
    Variable(
        "KTC_KAFKA_RECONNECT_S", "setting", "seconds a broker may stay unreachable before the run ends (default 30)"
    ),
    Variable(
        "KTC_KFAKE_VERSION",
        "setting",
        "--impl kfake: 'pinned' (default), 'newest' (the Go proxy's), or a module version (replay lines set it)",
    ),
    Variable("KTC_TANSU_BIN", "setting", "--impl tansu: your own tansu binary (else the tansu extra's, or PATH's)"),
    Variable(
        "KTC_CONTAINER_IMAGE",
        "setting",
        "--impl kafka-container: 'auto' (apache/kafka where it can be "
        "pulled) or 'local' (always ktc/kafka from the cached jars)",
    ),
    Variable("KTC_SPARK_MASTER", "setting", "--impl spark: the Spark master (default local[*]; --spark-master wins)"),
    Variable("KTC_SPARK_CONF", "setting", "--impl spark: spark.KEY=VALUE lines for the session (--spark-conf adds)"),
    Variable(
        "KTC_SPARK_CLASS_ARCHIVE",
        "setting",
        "'off': Spark sessions load their classes without this machine's class archive of Spark's driver JVM",
    ),
    Variable("KTC_SPARK_KAFKA_PACKAGE", "setting", "ktc audit: the spark-sql-kafka Maven coordinate to use"),
    Variable("KTC_TOPIC_LOG", "setting", "a file every broker topic name is appended to, with its worker"),
    Variable(
        "HYPOTHESIS_PROFILE", "setting", "plain pytest: dev (default), ci or nightly (ktc run: --hypothesis-profile)"
    ),
    Variable(
        "KTC_RUN_ID",
        "boundary",
        "one id per run, in every topic name: set by the pytest plugin, inherited by the xdist workers",
    ),
    Variable(
        "KTC_SUPERVISED",
        "boundary",
        "ktc run's pytest child: its controller leads a process group and passes SIGTERM on to it",
    ),
    Variable("KTC_PROGRESS_FD", "boundary", "ktc run's pytest child: the pipe its progress events go to"),
    Variable("KTC_CLOCK_FILE", "boundary", "a broker's JVM: the file ktc's clock preload reads the time from"),
    Variable(
        "JDK_JAVA_OPTIONS",
        "boundary",
        "the JVMs of the broker ./run setup starts to write its release's class archive (-XX:ArchiveClassesAtExit)",
    ),
    Variable("PYTEST_XDIST_WORKER", "world", "pytest-xdist's worker name, in topic names"),
    Variable("PYTHONPATH", "world", "extended with the working directory for ktc run's child (a module:attr --impl)"),
    Variable("CI", "world", "set: ktc run prints plain lines, no live progress"),
    Variable("TERM", "world", "'dumb': ktc run prints plain lines, no live progress"),
    Variable("GITHUB_ACTIONS", "world", "set: ktc run adds GitHub annotations"),
    Variable(
        "DOCKER_HOST",
        "world",
        "--impl kafka-container: your Docker engine (else the default socket, else a dockerd ktc starts)",
    ),
    Variable("JAVA_HOME", "world", "the Java the ktc/kafka container image is built from (else java on PATH)"),
    Variable("KTC_BROKER_TESTS", "suites", "1: run the broker tier (suites/broker/), starting real Kafka brokers"),
    Variable(
        "KTC_ALLOW_NO_BROWSER",
        "suites",
        "1: the HTML report's browser test skips, with the reason, when no chromium is installed",
    ),
    Variable("KTC_KAFKA_VERSIONS", "suites", "comma-separated releases the local broker and security tests start"),
    Variable("KTC_FAULT_HISTORIES", "suites", "histories of the random network fault test (default 300)"),
    Variable("KTC_BROKER_BULK_SCENARIOS", "suites", "scenarios of the broker's bulk agreement run"),
    Variable("KTC_BULK_SCENARIOS", "suites", "scenarios of Spark's bulk agreement run"),
    Variable("KTC_DOUBLE_RUN_LOG", "suites", "a test double's log of its run() calls, across the pytest child"),
    Variable("KTC_MUTATION_ORIGIN", "tools", "python -m mutation: the tree a snapshot copy came from"),
    Variable("KTC_MUTATION_SNAPSHOT", "tools", "python -m mutation: set in the copy, which then runs in place"),
    Variable("KTC_MUTATION_COMMAND", "tools", "python -m mutation: the command as typed, for the reports"),
)


def by_name() -> dict[str, Variable]:
    return {variable.name: variable for variable in VARIABLES}


def listing(environ: Mapping[str, str] | None = None) -> str:
    """The table, by kind; a variable set here shows its value."""
    environ = os.environ if environ is None else environ
    width = max(len(v.name) for v in VARIABLES)
    lines: list[str] = []
    for kind, title in KINDS.items():
        lines += ["", f"{title}:"] if lines else [f"{title}:"]
        lines += [
            f"  {v.name:<{width}}  {v.meaning}" + (f" [set: {environ[v.name]}]" if environ.get(v.name) else "")
            for v in VARIABLES
            if v.kind == kind
        ]
    return "\n".join(lines)
