"""Each broker's clock, measured: a window for its offset from ktc's clock, from the LogAppendTime echoes.

A produce to a LogAppendTime topic is stamped with the leader's clock at some instant of [sent, received] of ktc's
clock, so that leader's offset lies in [LogAppendTime - received, LogAppendTime - sent].  Every echo of one node
narrows its window (the intersection); nothing is guessed inside it.  Two nodes' windows bound their skew:
offset(a) - offset(b) lies in [low(a) - high(b), high(a) - low(b)].  Pure: no Kafka client here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Window:
    """A node's clock offset from ktc's, in ms: somewhere in [low, high] (``echoes`` measured it).  ``low > high``:
    no one offset explains every echo (its clock stepped meanwhile)."""

    low: int
    high: int
    echoes: int = 1

    @classmethod
    def of(cls, log_append_time: int, sent: int, received: int) -> Window:
        return cls(log_append_time - received, log_append_time - sent)

    def narrowed(self, other: Window) -> Window:
        return Window(max(self.low, other.low), min(self.high, other.high), self.echoes + other.echoes)

    @property
    def consistent(self) -> bool:
        return self.low <= self.high


def measured(echoes: Iterable[tuple[int, int, int, int]]) -> dict[int, Window]:
    """(node, LogAppendTime, sent, received) -> each node's window."""
    out: dict[int, Window] = {}
    for node, log_append_time, sent, received in echoes:
        seen = Window.of(log_append_time, sent, received)
        out[node] = out[node].narrowed(seen) if node in out else seen
    return out


def merged(old: Mapping[int, Window], new: Mapping[int, Window]) -> dict[int, Window]:
    return {
        node: old[node].narrowed(new[node]) if node in old and node in new else old.get(node) or new[node]
        for node in {*old, *new}
    }


def skew_bound(windows: Mapping[int, Window]) -> int | None:
    """The largest skew between two nodes the windows allow (ms), or None with fewer than two nodes measured."""
    nodes = [w for w in windows.values() if w.consistent]
    if len(nodes) < 2:
        return None
    return max(a.high - b.low for a in nodes for b in nodes if a is not b)


def summary(windows: Mapping[int, Window]) -> dict:
    """For the target's record: each node's window and the skew bound."""
    return {
        "nodes": {str(node): [w.low, w.high, w.echoes] for node, w in sorted(windows.items())},
        "max_skew_ms": skew_bound(windows),
    }


def describe(recorded: Mapping) -> str:
    """The record's windows in words: ``node 1 in [-2, +3] ms (12 echoes)``; skew bound."""
    nodes = "; ".join(
        f"node {node} {low:+d}..{high:+d} ms ({echoes} echoes)"
        if low <= high
        else f"node {node} inconsistent ({echoes} echoes: its clock stepped)"
        for node, (low, high, echoes) in recorded.get("nodes", {}).items()
    )
    bound = recorded.get("max_skew_ms")
    skew = f"; skew between nodes at most {bound} ms" if bound is not None else ""
    return f"clock offsets from ktc's, measured by LogAppendTime echoes: {nodes or 'none measured'}{skew}"
