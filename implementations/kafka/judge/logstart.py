"""Records a broker deleted on its own: found after each history, never judged as the model's.

A broker deletes old segments on its own schedule (``log.retention.check.interval.ms``, five minutes by
default; a segment whose first record is older than ``segment.ms`` rolls on the next append, so a
history of ancient timestamps leaves deletable segments behind at once).  The model deletes records
only on an explicit RetentionPass.  So after a history's last operation ktc asks ListOffsets EARLIEST
of every partition it produced to: a log start offset above 0 means the broker deleted records at some
point of the history, and nothing the history read from that log can be judged — it is cut as
``unknown`` with the offsets.  (A history with a RetentionPass is undecidable anyway: not probed.)
"""

from __future__ import annotations

from collections.abc import Sequence

from ktc.implementations.protocol import Cut
from ktc.kafka.client import messages, routing
from ktc.kafka.client.connection import Broken
from ktc.kafka.client.multiplex import Lost
from ktc.reference.types import History, Produce, RetentionPass


def partitions_to_probe(history: History, names: dict[str, str]) -> list[tuple[str, int]]:
    """The (broker topic name, partition) pairs the history produced to, when it has no RetentionPass."""
    if any(isinstance(op, RetentionPass) for op in history.ops):
        return []
    return sorted({(names[op.topic], op.partition) for op in history.ops if isinstance(op, Produce)})


def probe(partitions: Sequence[tuple[str, int]], leaders: routing.Leaders):
    """The probe's requests (a generator, as ``operations.operation``): ListOffsets EARLIEST of ``partitions``,
    each at its leader (routing.list_offsets_on_leaders); returns the answers."""
    return (
        yield from routing.list_offsets_on_leaders(
            [(t, p, messages.EARLIEST_TIMESTAMP) for t, p in partitions], leaders
        )
    )


def cut_after(answers, op_count: int) -> Cut | None:
    """The cut the probe's answers call for: None when every answered log still starts at 0 (a
    partition that answers with an error code gives no evidence either way)."""
    if isinstance(answers, (Lost, Broken)):
        return Cut(
            "unknown",
            op_count,
            f"the log start offset could not be read after the history "
            f"({answers.reason}), so records the broker may have deleted cannot be ruled out",
        )
    moved = {key: a.offset for key, a in answers.items() if a.error_code == 0 and a.offset > 0}
    if not moved:
        return None
    where = ", ".join(f"{topic}-{partition} starts at {offset}" for (topic, partition), offset in sorted(moved.items()))
    return Cut(
        "unknown",
        op_count,
        f"the broker deleted records on its own retention schedule during the history "
        f"({where}; the model deletes only on a RetentionPass), so what it read cannot be judged",
    )
