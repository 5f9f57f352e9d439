// Sketch for LogValidatorTest (Apache Kafka 4.4.0): KIP-937.record-error-message (KIP-937)
// Method under test: org.apache.kafka.storage.internals.log.LogValidator#validateMessagesAndAssignOffsets  [verified with javap in /root/.cache/ktc/kafka/4.4.0/lib: public org.apache.kafka.storage.internals.log.LogValidator$ValidationResult validateMessagesAndAssignOffsets(org.apache.kafka.common.utils.internals.PrimitiveRef$LongRef, org.apache.kafka.storage.internals.log.LogValidator$MetricsRecorder, org.apache.kafka.common.utils.internals.BufferSupplier);]
// The KIP says: "Timestamp [record timestamp] of message with offset [record offset] is out of range."
// ktc's minimised history (counterexample.json in the finding's folder):
//   [0] CreateTopic(topic='u', config=TopicConfig(timestamp_type=<TimestampType.LOG_APPEND_TIME: 'LogAppendTime'>, before_max_ms=1000, after_max_ms=85, difference_max_ms=None, segment_ms=3493, retention_ms=349, retention_max_eventtime_ms=None, compression_type='producer', partitions=3))
//   [1] Produce(topic='u', batch=Batch(records=(Record(timestamp=2000000000000, key=b'\x0c:\x0b\x00M[i\x96', value=b'\xd4"\xcd&\x10\xdfEC'),), codec='lz4', timestamp_type=<TimestampType.LOG_APPEND_TIME: 'LogAppendTime'>, max_timestamp=6854, transactional=False, control=False, timestamp_extended=False), partition=1)

@Test
public void testKip937RecordErrorMessage() {
    // Given: the topic config and batches of the history above, at now = 2000000000000
    // When: LogValidator.validateMessagesAndAssignOffsets(...) is called as the broker calls it
    // Then: record_errors[0].message should be 'Invalid timestamp type in message DefaultRecord(offset=0, timestamp=6854, key=8 bytes, value=8 bytes). Producer should not set timestamp type to LogAppendTime.' (the KIP)
    //       but is 'Invalid timestamp type in message PartialDefaultRecord(offset=0, timestamp=6854, key=8 bytes, value=8 bytes). Producer should not set timestamp type to LogAppendTime.' (observed)
}
