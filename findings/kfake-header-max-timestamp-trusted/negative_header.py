#!/usr/bin/env python3
"""What a broker stores for a batch whose every record is below -1, and what ListOffsets -3 then answers.

Usage: python3 negative_header.py [--bootstrap HOST:PORT]     (standard library only; the wire code of reproduce.py)

Appends one batch with a record at -5 (header MaxTimestamp -5, as a client writes it) and one with a record at -1,
then prints both stored headers (Fetch) and the answer to ListOffsets -3.  Apache Kafka rewrites the first header to
-1 (LogValidator's max starts at NO_TIMESTAMP, -1) and answers -3 with offset -1, timestamp -1: the batch it finds at
the maximum holds no record at -1.  A kfake that keeps the client's header stores -5 and answers offset 1.  It
prints what it saw; it decides nothing (exit 0, or 3 when it could not run).
"""
import sys

from reproduce import create_topic, fetch, list_offsets, main, need, produce, record_batch


def run(bootstrap, versions, suffix):
    topic = "negative-header" + suffix
    need(create_topic(bootstrap, topic) == 0, f"CreateTopics {topic} failed")
    for stamp in (-5, -1):
        error, base, _, _ = produce(bootstrap, topic, record_batch([stamp]))
        print(f"Produce one record at {stamp}: error {error}, base offset {base}")
    _, high_watermark, stored = fetch(bootstrap, topic)
    for batch in stored:
        print(f"stored batch at offset {batch['base_offset']}: header MaxTimestamp {batch['max_timestamp']}, "
              f"records {batch['records']}")
    error, timestamp, offset = list_offsets(bootstrap, topic, -3, 7)
    print(f"ListOffsets -3: error {error}, offset {offset}, timestamp {timestamp}")
    return 0


if __name__ == "__main__":
    sys.exit(main(run, __doc__.splitlines()[0]))
