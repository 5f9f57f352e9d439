"""A failing clause as a conformance report, not a crash: the clause and its quote, where the
implementation first parts from the model, the minimal history as a short table with timestamps
relative to the broker's clock, and the line that replays it.  The raw JSON counterexample goes to
the report's counterexamples/ folder, not to the terminal."""

from __future__ import annotations

import textwrap
from dataclasses import fields

from ktc.checks.verdicts import Verdict, render_mismatch
from ktc.reference.types import (
    Batch,
    CreateTopic,
    History,
    Produce,
    TopicConfig,
    clock_states,
)
from ktc.specs.clauses import all_clauses

WIDTH = 100


def render(verdict: Verdict, history: History, implementation: str, replay: str) -> str:
    lines = [f"{verdict.clause} violated by {implementation} (profile {history.profile})"]
    lines += quote_lines(verdict.clause)
    lines.append("  where: " + (render_mismatch(verdict.mismatch) if verdict.mismatch else "; ".join(verdict.notes)))
    lines.append(f"  history ({len(history.ops)} operations; 'now' is the leader's clock when the operation ran):")
    lines += [f"    {row}" for row in history_rows(history, verdict)]
    return "\n".join(lines + [f"  replay: {replay}"])


def quote_lines(clause_id: str) -> list[str]:
    clause = all_clauses().get(clause_id)
    if clause is None:
        return []
    quote = " ".join(clause.quote.split())
    return textwrap.wrap(f'"{quote}" ({clause.quoted_from})', WIDTH, initial_indent="  ", subsequent_indent="   ")


def history_rows(history: History, verdict: Verdict) -> list[str]:
    failing = verdict.mismatch.op_index if verdict.mismatch else None
    rows = []
    for index, (op, clock) in enumerate(zip(history.ops, clock_states(history))):
        now = clock.leader_now(op.topic, getattr(op, "partition", 0)) if hasattr(op, "topic") else clock.real_ms
        mark = ">>" if index == failing else "  "
        rows.append(f"{mark} #{index:<3} t+{clock.real_ms - history.start_ms:<8} {describe(op, now)}")
    return rows


def describe(op, now: int) -> str:
    if isinstance(op, Produce):
        return f"Produce {op.topic}[{op.partition}] {batch_text(op.batch, now)}"
    if isinstance(op, CreateTopic):
        return f"CreateTopic {op.topic} {config_text(op.config)}".rstrip()
    args = [
        f"{f.name}={relative(getattr(op, f.name), now) if f.name == 'target' else getattr(op, f.name)!r}"
        for f in fields(op)
        if f.name != "topic"
    ]
    return " ".join([type(op).__name__, getattr(op, "topic", ""), *args]).replace("  ", " ")


def batch_text(batch: Batch, now: int) -> str:
    stamps = ", ".join(relative(r.timestamp, now) for r in batch.records[:6])
    more = f", ... ({len(batch.records)} records)" if len(batch.records) > 6 else ""
    extra = "" if batch.max_timestamp is None else f" max={relative(batch.max_timestamp, now)}"
    return f"{batch.timestamp_type.value} [{stamps}{more}]{extra}" + (
        "" if batch.codec == "none" else f" {batch.codec}"
    )


def config_text(config: TopicConfig) -> str:
    default = TopicConfig()
    changed = [
        f"{f.name}={getattr(config, f.name)!s}"
        for f in fields(config)
        if getattr(config, f.name) != getattr(default, f.name)
    ]
    return " ".join(changed)


def relative(timestamp: int, now: int) -> str:
    """A timestamp as the broker sees it: ``now``, ``now-3600001``; far ones (sentinels, Long.MIN/MAX) as is."""
    delta = timestamp - now
    if abs(delta) > 10 * 365 * 86_400_000:
        return str(timestamp)
    return "now" if delta == 0 else f"now{delta:+d}"
