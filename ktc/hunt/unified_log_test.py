"""A finding's unit test for Apache Kafka when the first divergence is a ListOffsets answer, in ``UnifiedLogTest``'s
style: a ``UnifiedLog`` created in a temporary directory with the topic's configs, the clock set to the broker's at
each step, every step on that partition replayed (produces appended as the leader appends them, a refused one
refused as the broker refuses it; retention passes; lookups), and at the lookup that diverged the KIP's offset and
timestamp asserted (``fetchOffsetByTimestamp``: none found is -1, -1 as ListOffsets answers it).  Written against
Apache Kafka 4.4's API, where UnifiedLog is Java; compiled as java_test.py compiles its tests."""

from __future__ import annotations

import re
from pathlib import Path

from ktc import reference
from ktc.hunt import java_test
from ktc.kafka.topics import kafka_configs
from ktc.reference.types import (
    CreateTopic,
    ListOffsets,
    ListOffsetsResult,
    Produce,
    RetentionPass,
    clock_states,
)

IMPORTS = """import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;"""
HELPERS = """
    // As UnifiedLogTest's LogTestUtils.createLog, with the broker's defaults
    private UnifiedLog createLog(Properties topicConfigs, KafkaScheduler scheduler) throws Exception {
        File dir = Files.createTempDirectory("kafka-logs").resolve("topic-0").toFile();
        return UnifiedLog.create(dir, new LogConfig(topicConfigs), 0L, 0L, scheduler, new BrokerTopicStats(), time,
                300000, new ProducerStateManagerConfig(86400000, false), 600000, new LogDirFailureChannel(10), true,
                Optional.empty());
    }

    // Appended as the leader appends a produce with acks=-1 (the high watermark follows); one the broker refuses
    // is left out, as it is
    private static void append(UnifiedLog log, MemoryRecords records) throws Exception {
        try {
            log.appendAsLeader(records, 0);
            log.updateHighWatermark(log.logEndOffset());
        } catch (RecordValidationException e) {
            // refused: nothing appended
        }
    }

    // ListOffsets' answer for one partition: offset and timestamp, -1 and -1 when none is found
    private static List<Long> listOffsets(UnifiedLog log, long target) {
        Optional<FileRecords.TimestampAndOffset> found =
                log.fetchOffsetByTimestamp(target, Optional.empty()).timestampAndOffsetOpt();
        return found.map(t -> List.of(t.offset, t.timestamp)).orElse(List.of(-1L, -1L));
    }

    private static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++)
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return out;
    }

    // As MockTime, which Kafka's test jars hold: set to the broker's clock at each step
    static class SettableTime implements Time {
        private long ms;

        SettableTime(long ms) {
            this.ms = ms;
        }

        void set(long ms) {
            this.ms = ms;
        }

        public long milliseconds() {
            return ms;
        }

        public long nanoseconds() {
            return ms * 1_000_000L;
        }

        public void sleep(long ms) {
            this.ms += ms;
        }
    }
"""


def class_name(clause_id: str) -> str:
    return "UnifiedLog" + java_test.class_name(clause_id).removeprefix("LogValidator")


def step_lines(history, expected, i: int, at: int) -> list[str]:
    """One step on the partition, at the broker's clock of that step; the lookup at ``at`` asserted."""
    op = history.ops[i]
    now = clock_states(history)[i].leader_now(getattr(op, "topic", ""), getattr(op, "partition", 0))
    head = [f"// [{i}] {type(op).__name__}", f"time.set({java_test.long(now)});"]
    if isinstance(op, Produce):
        body = java_test.batch_lines(op)
        return head + ["{", *[f"    {line}" for line in body], "    append(log, records);", "}"]
    if isinstance(op, RetentionPass):
        return head + ["log.deleteOldSegments();"]
    if isinstance(op, ListOffsets):
        call = f"listOffsets(log, {java_test.long(op.target)})"
        if i != at:
            return head + [f"{call};"]
        want = expected[i]
        assert isinstance(want, ListOffsetsResult)
        pair = f"List.of({java_test.long(want.offset)}, {java_test.long(want.timestamp)})"
        return head + [f"assertEquals({pair}, {call}); // the KIP's offset and timestamp"]
    return [f"// [{i}] {type(op).__name__}: the clock only"]


def on_partition(op, place: tuple[str, int]) -> bool:
    return not isinstance(op, CreateTopic) and (getattr(op, "topic", None), getattr(op, "partition", 0)) == place


def source(history, at: int, name: str, clause) -> str:
    """The test class: every step on the diverging lookup's partition up to it."""
    expected = reference.run(history)
    lookup = history.ops[at]
    topic = next(o for o in history.ops if isinstance(o, CreateTopic) and o.topic == lookup.topic)
    configs = [f'topicConfigs.put("{k}", "{v}");' for k, v in kafka_configs(topic.config).items()]
    place = (lookup.topic, lookup.partition)
    on = [i for i, op in enumerate(history.ops[: at + 1]) if type(op).__name__ == "Advance" or on_partition(op, place)]
    steps = [line for i in on for line in step_lines(history, expected, i, at)]
    stem = "test" + name.removeprefix("UnifiedLog").removesuffix("Test")
    quote = " ".join(clause.quote.split())[:300].replace("*/", "* /")
    body = [
        "Properties topicConfigs = new Properties();",
        *configs,
        "KafkaScheduler scheduler = new KafkaScheduler(1);",
        "scheduler.startup();",
        "UnifiedLog log = createLog(topicConfigs, scheduler);",
        "try {",
        *[f"    {line}" for line in steps],
        "} finally {",
        "    log.close();",
        "    scheduler.shutdown();",
        "}",
    ]
    return "\n".join(
        [
            java_test.LICENSE,
            f"package {java_test.PACKAGE};",
            "",
            IMPORTS,
            "",
            "/**",
            f" * {clause.kip}: {quote}",
            " * The steps on one partition replayed on a UnifiedLog, and the KIP's answer to the lookup asserted.",
            " */",
            f"public class {name} {{",
            f"    private final SettableTime time = new SettableTime({java_test.long(history.start_ms)});",
            "",
            "    @Test",
            f"    public void {stem}() throws Exception {{",
            *[f"        {line}".rstrip() for line in body],
            "    }",
            HELPERS.rstrip("\n"),
            "}",
            "",
        ]
    )


def write(folder: Path, history, at: int, clause) -> tuple[Path, str]:
    name = class_name(clause.id)
    path = folder / f"{name}.java"
    path.write_text(re.sub(r"\n{3,}", "\n\n", source(history, at, name, clause)))
    return path, java_test.javac_check(path)
