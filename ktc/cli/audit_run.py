"""``ktc audit`` after its options were checked: one Spark session, each topic read and audited,
the report written, the violations kept as Parquet.  Spark's Kafka source refusing a record (a
timestamp beyond Spark's microseconds) is not the end: the topic is read again with ktc's client; nor
is a connector whose jars cannot be resolved: every topic is then read with ktc's client.  A Spark that
cannot start at all is one line (``ktc: error: Spark could not start: ...; see LOG``), exit 2."""

from __future__ import annotations

import json
import logging
import signal
import sys
from contextlib import nullcontext
from dataclasses import replace

from ktc.cli.common import UsageError


def spark_session(plan):
    """(session, note for the report, plan): the plan says ``kafka_unavailable`` when the connector's jars
    could not be had; a session that cannot start is a one-line error."""
    try:
        import pyspark
    except ImportError:
        raise UsageError("ktc audit needs Spark: pip install 'ktc[spark]' (and Java 17)") from None
    from ktc.spark import session

    settings, note = {}, "no Kafka source"
    if plan.source == "kafka":
        settings, note, plan = kafka_connector(plan, pyspark.__version__)
    session.configure(master=plan.spark_master, **settings)
    spark = started(session)
    if plan.kafka_unavailable:  # said once Spark is up: without Spark there is no fallback, only the error
        print(
            f"ktc audit: Spark's Kafka source is unavailable ({plan.kafka_unavailable}); reading with ktc's client",
            file=sys.stderr,
            flush=True,
        )
    quiet_interrupts()
    return spark, note, plan


def started(session):
    """The shared session; a Spark that cannot start is one line (``Spark could not start: ...; see LOG``)."""
    try:
        return session.get()
    except session.SparkStartError as error:
        raise UsageError(str(error)) from None


def kafka_connector(plan, installed: str):
    """(settings, note, plan) for Spark's Kafka source: its jars from ktc's cache (resolved once, under a
    lock: connector.py); without them, ktc's client reads every topic (the plan's ``kafka_unavailable``)."""
    from ktc.audit import connector
    from ktc.audit.sources import KAFKA_SOURCE_NOTE

    try:
        found, why = connector.jars(installed)
    except connector.ConnectorError as error:
        return {}, f"Spark's Kafka source unavailable: {error}", replace(plan, kafka_unavailable=str(error))
    return {"spark.jars": ",".join(found)}, f"{why}; {KAFKA_SOURCE_NOTE}", plan


def quiet_interrupts() -> None:
    """Ctrl-C is a plain KeyboardInterrupt (ktc prints one line, atexit stops Spark): PySpark's own handler
    calls into the JVM from inside a JVM call, and py4j logs that as tracebacks."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    logging.getLogger().setLevel(logging.CRITICAL)


def client_for(plan):
    if not plan.bootstrap:
        return nullcontext(None)
    from ktc.kafka.client import wire

    return wire.Client(plan.bootstrap, timeout_s=60)


def asker(client, topic: str):
    if client is None:
        return None

    def answer(partition: int, target: int) -> tuple[int, int, int]:
        out = client.list_offsets(topic, target, partition=partition)
        return out.error_code, out.timestamp, out.offset

    return answer


def read(spark, client, plan, topic: str):
    """(records DataFrame, live, read_ms, source name) for one topic."""
    from ktc.audit import sources

    if plan.source == "ktc":
        table, read_ms = sources.read_ktc(client, topic)
        return spark.createDataFrame(table), False, read_ms, "ktc"
    if plan.source == "kafka":
        from ktc.audit.connector import kafka_options
        from ktc.kafka.client.security import Security

        options = kafka_options(Security.from_env())
        return sources.read_spark_kafka(spark, plan.bootstrap, topic, options), True, None, "Spark's Kafka source"
    df = sources.read_file(spark, plan.source)
    if "topic" in df.columns:
        df = df.where(df.topic == topic)
    return df, False, None, plan.source


class KafkaSourceRefused(Exception):
    """Spark's Kafka source could not read a topic; the message says why, in one line."""


def audited(spark, client, plan, topic: str, facts):
    """Audit one topic; a Kafka source that refuses a record, or that could not be loaded, falls back to
    ktc's client (a refusal is said on stderr; the source's name in the report says either)."""
    refused = plan.kafka_unavailable
    if refused is None:
        try:
            return audited_as_planned(spark, client, plan, topic, facts)
        except KafkaSourceRefused as error:
            refused = str(error)
        print(
            f"ktc audit: Spark's Kafka source could not read {topic} ({refused}); reading it with ktc's client",
            file=sys.stderr,
            flush=True,
        )
    from ktc.audit import audit, sources

    table, read_ms = sources.read_ktc(client, topic)
    result = audit(
        spark.createDataFrame(table),
        replace(facts, read_ms=read_ms),
        answer=asker(client, topic),
        samples=plan.samples,
        seed=plan.seed,
    )
    return result, f"ktc (Spark's Kafka source could not read it: {refused})"


def audited_as_planned(spark, client, plan, topic: str, facts):
    """Audit one topic read from the planned source; ``KafkaSourceRefused`` when the Kafka source failed."""
    from ktc.audit import audit, sources

    try:
        records, live, read_ms, name = read(spark, client, plan, topic)
        facts = facts if read_ms is None else replace(facts, read_ms=read_ms)
        return audit(records, facts, live=live, answer=asker(client, topic), samples=plan.samples, seed=plan.seed), name
    except Exception as error:  # the source is read when planned (a missing data source) or when first used
        refused = sources.kafka_source_failure(error) if plan.source == "kafka" else None
        if refused is None:
            raise
        raise KafkaSourceRefused(refused) from None


def audit_topic(spark, client, plan, topic: str):
    from ktc.audit.facts import FactsError, facts_from_configs
    from ktc.audit.sources import SourceError

    try:
        facts = facts_from_configs(topic, plan.configs[topic], plan.profile, skew_ms=plan.skew_ms)
        result, name = audited(spark, client, plan, topic, facts)
    except (FactsError, SourceError) as error:
        raise UsageError(str(error)) from None
    return {**result.as_dict(), "source": name, "failed": len(result.failed)}, result


def run(plan) -> int:
    """Audit each topic in turn; after each, its violating rows and the report so far are on disk."""
    spark, note, plan = spark_session(plan)
    directory, text = None, ""
    data = {
        "bootstrap": plan.bootstrap,
        "source": plan.source,
        "seed": plan.seed,
        "notes": note,
        "topics": [],
        "failed": 0,
        "violations": "none",
    }
    with client_for(plan) as client:
        for topic in plan.topics:
            row, result = audit_topic(spark, client, plan, topic)
            directory = directory or new_directory(plan)
            data["violations"] = keep_violations(directory, result.violations)
            result.release()
            data["topics"].append(row)
            data["failed"] += row["failed"]
            text = write_report(directory, data)
    print(text, end="")
    print(f"ktc audit: report {directory}/audit.html", flush=True)
    return 1 if data["failed"] else 0


def new_directory(plan):
    from ktc.cli import run as cli_run

    return cli_run.new_run_directory(plan.report)


def keep_violations(directory, frame) -> str:
    """A topic's violating rows, appended to one Parquet dataset for further analysis."""
    target = directory / "violations.parquet"
    if frame is not None:
        frame.write.mode("append").parquet(str(target))
    return str(target) if target.exists() else "none"


def write_report(directory, data: dict) -> str:
    """The report so far, as JSON, text and HTML; returns the text."""
    from ktc.reports.audit import render_html, render_text

    text = render_text(data)
    (directory / "audit.json").write_text(json.dumps(data, indent=2, default=str))
    (directory / "audit.txt").write_text(text)
    (directory / "audit.html").write_text(render_html(data))
    return text
