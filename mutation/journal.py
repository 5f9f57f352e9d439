"""The run's journal: one JSON line per decided mutant, appended as it is decided, so a run stopped
half-way (Ctrl-C, a killed session) loses nothing and ``--resume`` runs only what is left.

A journal belongs to one seed and one set of suites: its first line records the seed and the
timeout, and ``--resume`` refuses a journal written with another seed.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from .runner import Outcome

NAME = "outcomes.jsonl"


class JournalError(Exception):
    """A journal that cannot be resumed: the message says why, in one line."""


def start(out: Path, seed: int, timeout_s: int) -> Path:
    """A fresh journal in ``out`` (an older one is replaced)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / NAME
    path.write_text(json.dumps({"seed": seed, "timeout_s": timeout_s}) + "\n")
    return path


def append(path: Path, outcome: Outcome) -> None:
    with path.open("a") as journal:
        journal.write(json.dumps(asdict(outcome)) + "\n")


def resume(out: Path, seed: int) -> tuple[Path, int, list[Outcome]]:
    """The journal in ``out``, its timeout and the outcomes it holds; a missing, foreign or malformed
    journal is a ``JournalError``.  A torn last line (the run was killed mid-write) is dropped."""
    path = out / NAME
    if not path.exists():
        raise JournalError(f"nothing to resume: no {path} (start without --resume)")
    lines = path.read_text().splitlines()
    header = parsed(lines[0] if lines else "", path)
    if not isinstance(header, dict) or header.get("seed") != seed:
        raise JournalError(
            f"{path} was written with seed {header.get('seed') if isinstance(header, dict) else '?'}, "
            f"not {seed}: resume with that --seed, or start afresh without --resume"
        )
    outcomes = [o for o in (outcome_of(parsed(line, None)) for line in lines[1:]) if o is not None]
    latest = {o.key: o for o in outcomes}  # a mutant run again (--retry-survivors): its last outcome counts
    return path, int(header["timeout_s"]), list(latest.values())


def outcome_of(row) -> Outcome | None:
    try:
        return Outcome(**{**row, "clauses": tuple(row.get("clauses", ()))})
    except (TypeError, AttributeError):
        return None


def parsed(line: str, path: Path | None):
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        if path is not None:
            raise JournalError(f"{path} is not a mutation journal (its first line is not JSON)") from None
        return None
