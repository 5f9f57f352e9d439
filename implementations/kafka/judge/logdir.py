"""A local broker's partitions as its log directory shows them: segments and their time indexes.

Read-only, from the documented file formats (no Kafka code): a partition is the directory
``<log.dirs>/<topic>-<partition>``; a segment is ``<base offset, 20 digits>.log`` (magic-2 record
batches, decoded by client/records.py) with ``<base>.timeindex`` beside it (12-byte entries: int64
timestamp, int32 offset relative to the base, big-endian).  Segments marked ``.deleted`` or
``.cleaned`` are gone from the log and not listed.

Only the active segment's time index is preallocated (zero-filled past its entries); a rolled one is
trimmed to its entries.  Its entries are read up to the first all-zero entry after the first, and a
first entry of (0, 0) counts only when the segment's batch ending at its base offset has header max 0
(an entry names the last offset of the batch with the max) -- the one case the zero fill cannot tell
apart from an entry.  Seen in CI: one batch [0, 0] read as the entry (0, 0) Kafka never wrote.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from ktc.kafka.client.records import decode_batches
from ktc.reference.types import DescribeLogResult, SegmentInfo

ENTRY = struct.Struct(">qi")
INDEX_PAGE = ENTRY.size * 341  # whole entries, about 4 KB
UNKNOWN_TOPIC_OR_PARTITION = 3


class LogDir:
    """The partitions under one ``log.dirs`` entry of a broker ktc started."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def segment_names(self, topic: str, partition: int) -> list[str]:
        """``<base>.log`` names in offset order (one listdir: counted around every Produce, so kept cheap)."""
        try:
            names = os.listdir(self.root / f"{topic}-{partition}")
        except FileNotFoundError:
            return []
        return sorted(name for name in names if name.endswith(".log"))

    def segment_files(self, topic: str, partition: int) -> list[Path]:
        return [self.root / f"{topic}-{partition}" / name for name in self.segment_names(topic, partition)]

    def segment_bases(self, topic: str, partition: int) -> list[int]:
        return [int(name[: -len(".log")]) for name in self.segment_names(topic, partition)]

    def partition_bases(self, topic: str) -> dict[int, list[int]]:
        """Every partition of ``topic`` in this directory -> its segments' base offsets."""
        prefix = f"{topic}-"
        numbers = [name[len(prefix) :] for name in os.listdir(self.root) if name.startswith(prefix)]
        return {int(n): self.segment_bases(topic, int(n)) for n in numbers if n.isdigit()}

    def segment_count(self, topic: str, partition: int) -> int:
        return len(self.segment_names(topic, partition))

    def describe(self, topic: str, partition: int) -> DescribeLogResult:
        files = self.segment_files(topic, partition)
        if not files:
            return DescribeLogResult((), UNKNOWN_TOPIC_OR_PARTITION)
        return DescribeLogResult(tuple(segment(path, after) for path, after in zip(files, [*files[1:], None])))


def segment(path: Path, following: Path | None) -> SegmentInfo:
    """One segment: base offset (its name), next offset (the following base, or past its last batch),
    its largest timestamp (of its batches' MaxTimestamp, -1 when none is >= 0) and its time index (which
    lags: Kafka indexes an append only once bytes were appended before it, so a lone batch has none)."""
    base = int(path.stem)
    batches = decode_batches(path.read_bytes())
    end = (
        int(following.stem)
        if following is not None
        else (batches[-1].base_offset + batches[-1].last_offset_delta + 1 if batches else base)
    )
    zero_entry = any(b.max_timestamp == 0 and b.base_offset + b.last_offset_delta == base for b in batches)
    index = time_index(path.with_suffix(".timeindex"), base, zero_entry)
    return SegmentInfo(base, end, max([-1, *(b.max_timestamp for b in batches)]), index)


def time_index(path: Path, base: int, zero_is_a_timestamp: bool) -> tuple[tuple[int, int], ...]:
    entries = []
    for timestamp, relative in index_entries(path):
        if (timestamp, relative) == (0, 0) and (entries or not zero_is_a_timestamp):
            break
        entries.append((timestamp, base + relative))
    return tuple(entries)


def index_entries(path: Path):
    """The (timestamp, relative offset) entries of a time index file, read a page at a time: the active
    segment's is preallocated to ``segment.index.bytes`` (10 MB by default), nearly all of it zero fill,
    and read whole on every DescribeLog it cost 4 % of a worker's CPU in ``./run conformance``."""
    try:
        with open(path, "rb") as file:
            while page := file.read(INDEX_PAGE):
                yield from (ENTRY.unpack_from(page, at) for at in range(0, len(page) - ENTRY.size + 1, ENTRY.size))
    except FileNotFoundError:
        return
