// Sketch for UnifiedLogTest (Apache Kafka 4.4.0): KIP-33.list-offsets-first-offset-at-or-after (KIP-33)
// Method under test: org.apache.kafka.storage.internals.log.UnifiedLog#fetchOffsetByTimestamp  [verified with javap in /root/.cache/ktc/kafka/4.4.0/lib: public org.apache.kafka.storage.internals.log.OffsetResultHolder fetchOffsetByTimestamp(long, java.util.Optional<org.apache.kafka.storage.internals.log.AsyncOffsetReader>);]
// The KIP says: "The offset is the offset of the first message whose timestamp is greater than or equals to the target timestamp and whose offset is greater than or equals to the startingOffset."
// ktc's minimised history (counterexample.json in the finding's folder):
//   [0] CreateTopic(topic='t', config=TopicConfig(timestamp_type=<TimestampType.CREATE_TIME: 'CreateTime'>, before_max_ms=9223372036854775807, after_max_ms=38385849, difference_max_ms=None, segment_ms=None, retention_ms=None, retention_max_eventtime_ms=None, compression_type='producer', partitions=2))
//   [1] Produce(topic='t', batch=Batch(records=(Record(timestamp=1715318486257, key=None, value=b'z\xad\xff\xc1\x8aC\xedg\x0b\x14\x8f@\x88\x95\x15['),), codec='none', timestamp_type=<TimestampType.LOG_APPEND_TIME: 'LogAppendTime'>, max_timestamp=-584, transactional=False, control=False, timestamp_extended=False), partition=1)
//   [2] ListOffsets(topic='t', target=470, partition=1, version=9, read_committed=True)

@Test
public void testKip33ListOffsetsFirstOffsetAtOrAfter() {
    // Given: the topic config and batches of the history above, at now = 1715318486257
    // When: UnifiedLog.fetchOffsetByTimestamp(...) is called as the broker calls it
    // Then: ListOffsets by timestamp (target 470) should be (0, 0, 1797928524831) (the KIP)
    //       but is (0, -1, -1) (observed)
}
