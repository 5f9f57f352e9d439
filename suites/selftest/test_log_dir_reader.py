"""judge/logdir.py reads a partition directory as Kafka lays it out; files written here, no broker."""

from __future__ import annotations

import struct

from ktc.implementations.kafka.judge.logdir import UNKNOWN_TOPIC_OR_PARTITION, LogDir
from ktc.kafka.client.records import encode_batch
from ktc.reference.types import Batch, Record, SegmentInfo

ENTRY = struct.Struct(">qi")
PREALLOCATED = bytes(12 * 8)  # an active segment's index: zero-filled past its entries


def write_segment(partition_dir, base: int, stamps: list[list[int]], index: list[tuple[int, int]], fill=b"") -> None:
    log, offset = b"", base
    for batch in stamps:
        log += encode_batch(Batch(tuple(Record(ts) for ts in batch)), base_offset=offset)
        offset += len(batch)
    (partition_dir / f"{base:020d}.log").write_bytes(log)
    entries = b"".join(ENTRY.pack(ts, at - base) for ts, at in index)
    (partition_dir / f"{base:020d}.timeindex").write_bytes(entries + fill)


def test_segments_are_read_in_offset_order_with_their_ends_and_time_indexes(tmp_path):
    partition = tmp_path / "t-0"
    partition.mkdir()
    write_segment(partition, 0, [[5], [9, 7]], [(9, 2)])
    write_segment(partition, 3, [[4], [11]], [(11, 4)], fill=PREALLOCATED)
    (partition / f"{1:020d}.log.deleted").write_bytes(b"")  # on its way out: not a segment
    got = LogDir(tmp_path).describe("t", 0)
    assert got.segments == (SegmentInfo(0, 3, 9, ((9, 2),)), SegmentInfo(3, 5, 11, ((11, 4),)))
    assert LogDir(tmp_path).segment_count("t", 0) == 2


def test_an_empty_active_segment_has_no_index_and_its_next_offset_is_its_base(tmp_path):
    partition = tmp_path / "t-1"
    partition.mkdir()
    write_segment(partition, 7, [], [], fill=PREALLOCATED)
    assert LogDir(tmp_path).describe("t", 1).segments == (SegmentInfo(7, 7, -1, ()),)


def test_a_first_entry_of_zero_counts_only_when_the_batch_ending_at_the_base_has_max_zero(tmp_path):
    for partition, stamps in ((0, [[0]]), (1, [[-1]]), (2, [[0, 0]])):
        directory = tmp_path / f"z-{partition}"
        directory.mkdir()
        write_segment(directory, 0, stamps, [], fill=PREALLOCATED)
    assert LogDir(tmp_path).describe("z", 0).segments[0].time_index == ((0, 0),)
    assert LogDir(tmp_path).describe("z", 1).segments[0].time_index == ()
    assert LogDir(tmp_path).describe("z", 2).segments[0].time_index == ()  # seen in CI: an entry names a last offset


def test_a_partition_without_a_directory_is_unknown(tmp_path):
    assert LogDir(tmp_path).describe("missing", 0).error_code == UNKNOWN_TOPIC_OR_PARTITION
