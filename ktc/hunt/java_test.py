"""A finding's unit test for Apache Kafka, in ``LogValidatorTest``'s style: each produce the test needs (the one the
first divergence is at, or those that wrote the batches a read diverges on) is rebuilt with
``MemoryRecords.builder`` byte for byte (its LogAppendTime bit, its header's MaxTimestamp as sent), validated by
``LogValidator`` as the broker validates it (the topic's timestamp type and bounds, the clock at that produce, the
offset it is appended at), and the KIP's answer asserted: the error code the broker maps the thrown exception to,
the records it blames, or the batch as it is stored.  The test is written against Apache Kafka 4.4's API and
compiled with ``javac`` against a release's jars in ktc's cache (javac_check)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from ktc import reference
from ktc.cache import cache_root, resolving
from ktc.reference.configs import effective_limits
from ktc.reference.types import (
    NO_TIMESTAMP,
    CreateTopic,
    Fetch,
    FetchResult,
    Produce,
    ProduceResult,
    TimestampType,
    clock_states,
    header_max,
)
from ktc.specs.profiles import get
from ktc.specs.versions import RELEASE, key

PACKAGE = "org.apache.kafka.storage.internals.log"
API = (4, 4)  # the release line whose API the test is written in (record.internal, Compression, RequestLocal)
JUNIT = "junit/junit-platform-console-standalone-1.11.4.jar"
JUNIT_ARTIFACT = "org.junit.platform:junit-platform-console-standalone:1.11.4"  # the test's compile classpath
COMPRESSION = {
    "none": "Compression.NONE",
    "gzip": "Compression.gzip().build()",
    "snappy": "Compression.snappy().build()",
    "lz4": "Compression.lz4().build()",
    "zstd": "Compression.zstd().build()",
}
LICENSE = """/*
 * Licensed to the Apache Software Foundation (ASF) under one or more
 * contributor license agreements. See the NOTICE file distributed with
 * this work for additional information regarding copyright ownership.
 * The ASF licenses this file to You under the Apache License, Version 2.0
 * (the "License"); you may not use this file except in compliance with
 * the License. You may obtain a copy of the License at
 *
 *    http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */"""
IMPORTS = """import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.PrimitiveRef;
import org.apache.kafka.server.common.RequestLocal;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;"""
HELPERS = """
    private LogValidator validator(MemoryRecords records, long now, TimestampType topicType, long beforeMaxMs,
                                   long afterMaxMs, Compression targetCompression) {
        CompressionType source = records.batches().iterator().next().compressionType();
        return new LogValidator(records, topicPartition, new FixedTime(now), source, targetCompression, false,
                RecordBatch.MAGIC_VALUE_V2, topicType, beforeMaxMs, afterMaxMs,
                RecordBatch.NO_PARTITION_LEADER_EPOCH, AppendOrigin.CLIENT);
    }

    private LogValidator.ValidationResult validate(LogValidator validator, long offset) {
        return validator.validateMessagesAndAssignOffsets(PrimitiveRef.ofLong(offset), metricsRecorder,
                RequestLocal.withThreadConfinedCaching().bufferSupplier());
    }

    // The error code the broker answers for what validation throws (ReplicaManager maps it with Errors.forException)
    private static Errors errorOf(Exception e) {
        return Errors.forException(e instanceof RecordValidationException
                ? ((RecordValidationException) e).invalidException() : e);
    }

    private static List<Integer> blamed(Exception e) {
        List<Integer> indices = new ArrayList<>();
        if (e instanceof RecordValidationException)
            ((RecordValidationException) e).recordErrors().forEach(error -> indices.add(error.batchIndex));
        return indices;
    }

    private static List<Long> timestamps(MemoryRecords records) {
        List<Long> out = new ArrayList<>();
        for (Record record : records.records())
            out.add(record.timestamp());
        return out;
    }

    private static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++)
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return out;
    }

    // As MockTime, which Kafka's test jars hold: the broker's clock at the produce
    static class FixedTime implements Time {
        private final long ms;

        FixedTime(long ms) {
            this.ms = ms;
        }

        public long milliseconds() {
            return ms;
        }

        public long nanoseconds() {
            return ms * 1_000_000L;
        }

        public void sleep(long ms) {
        }
    }

    // As LogValidatorTest.MetricsRecorder
    static class MetricsRecorder implements LogValidator.MetricsRecorder {
        public void recordInvalidMagic() {
        }

        public void recordInvalidOffset() {
        }

        public void recordInvalidSequence() {
        }

        public void recordInvalidChecksums() {
        }

        public void recordNoKeyCompactedTopic() {
        }
    }
"""


def class_name(clause_id: str) -> str:
    words = re.split(r"[^A-Za-z0-9]+", clause_id.replace("KIP-", "Kip"))
    return "LogValidator" + "".join(w[:1].upper() + w[1:] for w in words if w) + "Test"


def produces_tested(history, expected, op_index: int) -> list[int]:
    """The produce at ``op_index``; for a read there, the produces to its topic-partition before it."""
    op = history.ops[op_index]
    if isinstance(op, Produce):
        return [op_index]
    where = (getattr(op, "topic", None), getattr(op, "partition", 0))
    return [
        i
        for i, o in enumerate(history.ops[:op_index])
        if isinstance(o, Produce) and (o.topic, o.partition) == where and expected[i].error_code == 0
    ] or [i for i, o in enumerate(history.ops[:op_index]) if isinstance(o, Produce)][-1:]


def stored(history, expected, index: int):
    """The batch the model stores for the produce at ``index``: a Fetch of its partition right after it, run by
    the model on the history up to there."""
    op, base = history.ops[index], expected[index].base_offset
    upto = replace(history, ops=(*history.ops[: index + 1], Fetch(op.topic, op.partition)))
    read = reference.run(upto)[-1]
    assert isinstance(read, FetchResult)
    return next((b for b in read.batches if b.base_offset == base), None)


def long(v: int) -> str:
    return {2**63 - 1: "Long.MAX_VALUE", -(2**63): "Long.MIN_VALUE"}.get(v, f"{v}L")


def batch_lines(op: Produce) -> list[str]:
    """MemoryRecords.builder writes the LogAppendTime bit with the header's MaxTimestamp given as logAppendTime,
    and a CreateTime batch's MaxTimestamp from its records: a header that disagrees is then set as sent."""
    b, lat = op.batch, op.batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    sent = header_max(b)
    kind = "LOG_APPEND_TIME" if lat else "CREATE_TIME"
    out = [
        "MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1 << 16), "
        f"RecordBatch.MAGIC_VALUE_V2, {COMPRESSION[b.codec]}, TimestampType.{kind}, 0L, "
        f"{long(sent) if lat else 'RecordBatch.NO_TIMESTAMP'});",
    ]
    for r in b.records:
        key_ = "null" if r.key is None else f'hex("{r.key.hex()}")'
        out.append(f'builder.append({long(r.timestamp)}, {key_}, hex("{r.value.hex()}"));')
    out.append("MemoryRecords records = builder.build();")
    if not lat and b.max_timestamp is not None and b.max_timestamp != header_max(type(b)(b.records)):
        out += [
            "MutableRecordBatch batch = records.batches().iterator().next();",
            f"batch.setMaxTimestamp(TimestampType.CREATE_TIME, {long(b.max_timestamp)}); // the header as sent",
        ]
    return out


def config_lines(history, op: Produce, now: int) -> list[str]:
    config = next(o.config for o in history.ops if isinstance(o, CreateTopic) and o.topic == op.topic)
    before, after = effective_limits(config, get(history.profile))
    topic = "LOG_APPEND_TIME" if config.timestamp_type is TimestampType.LOG_APPEND_TIME else "CREATE_TIME"
    target = op.batch.codec if config.compression_type in ("producer", "uncompressed") else config.compression_type
    target = "none" if config.compression_type == "uncompressed" else target
    return [
        f"long now = {long(now)};",
        f"TimestampType topicType = TimestampType.{topic};",
        f"long beforeMaxMs = {long(before)}; // message.timestamp.before.max.ms as the broker applies it",
        f"long afterMaxMs = {long(after)}; // message.timestamp.after.max.ms as the broker applies it",
    ] + [f"Compression targetCompression = {COMPRESSION[target]};"]


def assertion_lines(result: ProduceResult, kept) -> list[str]:
    """The KIP's answer: the error code and blamed records of a refusal, or the batch as stored."""
    call = "validate(validator(records, now, topicType, beforeMaxMs, afterMaxMs, targetCompression), offset)"
    if result.error_code != 0:
        blamed = ", ".join(str(e.batch_index) for e in result.record_errors)
        return [
            f"Exception e = assertThrows(Exception.class, () -> {call});",
            f"assertEquals(Errors.forCode((short) {result.error_code}), errorOf(e));",
            f"assertEquals(List.of({blamed}), blamed(e));",
        ]
    out = [f"LogValidator.ValidationResult result = {call};"]
    if result.log_append_time != NO_TIMESTAMP:
        out.append(f"assertEquals({long(result.log_append_time)}, result.logAppendTimeMs());")
    if kept is not None:
        out.append(f"assertEquals({long(kept.max_timestamp)}, result.maxTimestampMs());")
        stamps = ", ".join(long(r.timestamp) for r in kept.records)
        out.append(f"assertEquals(List.of({stamps}), timestamps(result.validatedRecords()));")
    return out


def test_method(history, expected, index: int, name: str) -> list[str]:
    op = history.ops[index]
    now = clock_states(history)[index].leader_now(op.topic, op.partition)
    offset = expected[index].base_offset if expected[index].error_code == 0 else next_offset(history, expected, index)
    body = [
        f"// [{index}] {type(op).__name__} to {op.topic!r}: {len(op.batch.records)} record(s), {op.batch.codec}",
        *config_lines(history, op, now),
        f"long offset = {long(offset)}; // the log end offset it is appended at",
        *batch_lines(op),
        "",
        *assertion_lines(expected[index], stored(history, expected, index)),
    ]
    return ["    @Test", f"    public void {name}() {{", *[f"        {line}".rstrip() for line in body], "    }", ""]


def next_offset(history, expected, index: int) -> int:
    op = history.ops[index]
    return sum(
        len(o.batch.records)
        for i, o in enumerate(history.ops[:index])
        if isinstance(o, Produce) and (o.topic, o.partition) == (op.topic, op.partition) and expected[i].error_code == 0
    )


def source(history, at: int, name: str, clause) -> str:
    """The test class: one test method per produce tested, named after the clause."""
    expected = reference.run(history)
    indices = produces_tested(history, expected, at)
    stem = "test" + name.removeprefix("LogValidator").removesuffix("Test")
    methods = [
        line
        for n, i in enumerate(indices)
        for line in test_method(history, expected, i, stem + (str(n + 1) if len(indices) > 1 else ""))
    ]
    quote = " ".join(clause.quote.split())[:300].replace("*/", "* /")
    return "\n".join(
        [
            LICENSE,
            f"package {PACKAGE};",
            "",
            IMPORTS,
            "",
            "/**",
            f" * {clause.kip}: {quote}",
            " * Each test validates one produce as the broker does and asserts the answer the KIP gives.",
            " */",
            f"public class {name} {{",
            '    private final TopicPartition topicPartition = new TopicPartition("topic", 0);',
            "    private final MetricsRecorder metricsRecorder = new MetricsRecorder();",
            "",
            *methods,
            HELPERS.strip("\n"),
            "}",
            "",
        ]
    )


def api_release() -> str | None:
    """The newest release in ktc's cache with the API the test is written in."""
    cached = [p.parent.name for p in (cache_root() / "kafka").glob("*/lib") if RELEASE.match(p.parent.name)]
    fits = [v for v in cached if tuple(int(x) for x in v.split(".")[:2]) >= API]
    return max(fits, key=key) if fits else None


def junit_jar() -> Path:
    """JUnit's standalone jar in ktc's cache, fetched from Maven Central with ``mvn dependency:copy`` the first
    time (under the cache's resolution lock); absent when Maven is missing or refuses, which the check says."""
    junit = cache_root() / JUNIT
    if junit.is_file() or shutil.which("mvn") is None:
        return junit
    argv = ["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={JUNIT_ARTIFACT}", f"-DoutputDirectory={junit.parent}"]
    with resolving():
        if not junit.is_file():
            subprocess.run(argv, capture_output=True, timeout=600, check=False)
    return junit


def javac_check(path: Path) -> str:
    """'compiles with javac against Apache Kafka V's jars (N s)', or why it does not or was not compiled."""
    if shutil.which("javac") is None:
        return "not compiled: javac is not on PATH (a JDK 17 or newer is needed)"
    version, junit = api_release(), junit_jar()
    if version is None or not junit.is_file():
        return f"not compiled: no Kafka {API[0]}.{API[1]}+ jars or no {junit.name} in {cache_root()}"
    classpath = f"{cache_root() / 'kafka' / version / 'lib'}/*:{junit}"
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as classes:
        done = subprocess.run(
            ["javac", "-nowarn", "-d", classes, "-cp", classpath, str(path)],
            capture_output=True,
            text=True,
            timeout=600,
        )
    took = time.monotonic() - started
    if done.returncode != 0:
        first = (done.stderr or done.stdout).strip().splitlines()[:2]
        return f"DOES NOT COMPILE against Apache Kafka {version}'s jars: {' '.join(first)[:300]}"
    return f"compiles with javac against Apache Kafka {version}'s jars ({took:.1f} s)"


def write(folder: Path, history, at: int, clause) -> tuple[Path, str]:
    """The test for the history's answer at operation ``at`` and the javac check's verdict."""
    name = class_name(clause.id)
    path = folder / f"{name}.java"
    path.write_text(source(history, at, name, clause))
    return path, javac_check(path)
