/*
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
 */
package org.apache.kafka.storage.internals.log;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.PrimitiveRef;
import org.apache.kafka.server.common.RequestLocal;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Two tests for LogValidatorTest (written against Apache Kafka 4.4.0's jars), with the three fields of
 * LogValidatorTest they use, so that they compile and run on their own against a release's main jars.
 */
public class LogValidatorLogAppendTimeBatchTest {
    private final Time time = Time.SYSTEM;
    private final TopicPartition topicPartition = new TopicPartition("topic", 0);
    private final MetricsRecorder metricsRecorder = new MetricsRecorder();

    @Test
    public void testLogAppendTimeBatchWithFutureRecordTimestampIsRejected() {
        long timestampBeforeMaxConfig = Long.MAX_VALUE; // the default
        long timestampAfterMaxConfig = Duration.ofHours(1).toMillis(); // the default since 4.0 (KIP-1030)
        long now = System.currentTimeMillis();
        long aYearAhead = now + Duration.ofDays(365).toMillis();
        // The LogAppendTime attribute set by the producer, the header's MaxTimestamp now, the one record a year ahead
        MemoryRecords records = logAppendTimeFlaggedBatch(now, aYearAhead);
        assertEquals(TimestampType.LOG_APPEND_TIME, records.batches().iterator().next().timestampType());

        RecordValidationException e = assertThrows(RecordValidationException.class, () ->
                new LogValidator(
                        records,
                        topicPartition,
                        time,
                        CompressionType.NONE,
                        Compression.NONE,
                        false,
                        RecordBatch.MAGIC_VALUE_V2,
                        TimestampType.CREATE_TIME,
                        timestampBeforeMaxConfig,
                        timestampAfterMaxConfig,
                        RecordBatch.NO_PARTITION_LEADER_EPOCH,
                        AppendOrigin.CLIENT
                ).validateMessagesAndAssignOffsets(
                        PrimitiveRef.ofLong(0L), metricsRecorder, RequestLocal.withThreadConfinedCaching().bufferSupplier()
                )
        );

        assertInstanceOf(InvalidTimestampException.class, e.invalidException());
        assertEquals(1, e.recordErrors().size());
    }

    @Test
    public void testLogAppendTimeBatchIsRejectedOnCreateTimeTopic() {
        long timestampBeforeMaxConfig = Long.MAX_VALUE; // the default
        long timestampAfterMaxConfig = Long.MAX_VALUE; // the default up to 3.9
        long now = System.currentTimeMillis();
        // The LogAppendTime attribute set by the producer; the header and the record both say now
        MemoryRecords records = logAppendTimeFlaggedBatch(now, now);

        RecordValidationException e = assertThrows(RecordValidationException.class, () ->
                new LogValidator(
                        records,
                        topicPartition,
                        time,
                        CompressionType.NONE,
                        Compression.NONE,
                        false,
                        RecordBatch.MAGIC_VALUE_V2,
                        TimestampType.CREATE_TIME,
                        timestampBeforeMaxConfig,
                        timestampAfterMaxConfig,
                        RecordBatch.NO_PARTITION_LEADER_EPOCH,
                        AppendOrigin.CLIENT
                ).validateMessagesAndAssignOffsets(
                        PrimitiveRef.ofLong(0L), metricsRecorder, RequestLocal.withThreadConfinedCaching().bufferSupplier()
                )
        );

        assertInstanceOf(InvalidTimestampException.class, e.invalidException());
        assertEquals(1, e.recordErrors().size());
    }

    private static MemoryRecords logAppendTimeFlaggedBatch(long headerMaxTimestamp, long recordTimestamp) {
        // MemoryRecordsBuilder writes logAppendTime as the header's MaxTimestamp of a LOG_APPEND_TIME batch and
        // keeps each v2 record's own timestamp (as base timestamp and delta)
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1024), RecordBatch.MAGIC_VALUE_V2,
                Compression.NONE, TimestampType.LOG_APPEND_TIME, 0L, headerMaxTimestamp);
        builder.append(recordTimestamp, null, "value".getBytes());
        return builder.build();
    }

    // As LogValidatorTest.MetricsRecorder
    static class MetricsRecorder implements LogValidator.MetricsRecorder {
        public int recordInvalidMagicCount = 0;
        public int recordInvalidOffsetCount = 0;
        public int recordInvalidChecksumsCount = 0;
        public int recordInvalidSequenceCount = 0;
        public int recordNoKeyCompactedTopicCount = 0;

        public void recordInvalidMagic() {
            recordInvalidMagicCount += 1;
        }

        public void recordInvalidOffset() {
            recordInvalidOffsetCount += 1;
        }

        public void recordInvalidSequence() {
            recordInvalidSequenceCount += 1;
        }

        public void recordInvalidChecksums() {
            recordInvalidChecksumsCount += 1;
        }

        public void recordNoKeyCompactedTopic() {
            recordNoKeyCompactedTopicCount += 1;
        }
    }
}
