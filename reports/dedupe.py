"""Failure signatures: which failing rows are the same bug.

Hypothesis shrinks one bug to slightly different minimal examples on different runs, tests and
profiles (other timestamps, other op indexes).  A signature keeps only what identifies the kind
of disagreement -- the mismatch's ``what`` label with every number replaced by ``N``, and the type
of the operation it happened on -- so those shrinks merge, while a different label (a different
projection of the results) or a different operation stays a different bug.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import TypedDict

from .schema import Counterexample, Row
from .verdicts import BAD

_NUMBER = re.compile(r"-?\d+")
_QUOTED = re.compile(r"'[^']*'")


class FailureGroup(TypedDict):
    """Failing rows of one clause with one signature: where they failed and how often."""

    clause: str
    signature: str
    raw: int
    cells: list[str]
    what: str | None


def normalise(what: str) -> str:
    """The label with numbers and quoted names (topics) replaced, so shrinks of one bug agree."""
    return _NUMBER.sub("N", _QUOTED.sub("'_'", what))


def op_type(counterexample: Counterexample) -> str:
    """The ``type`` tag of the operation the mismatch points at ("?" when it cannot be found)."""
    history = counterexample.get("history") or {}
    ops = (history.get("ops") if isinstance(history, dict) else None) or []
    index = (counterexample.get("mismatch") or {}).get("op_index")
    if isinstance(index, int) and 0 <= index < len(ops) and isinstance(ops[index], dict):
        return str(ops[index].get("type", "?"))
    return "?"


def signature(counterexample: Counterexample | None) -> str | None:
    """A stable 12-hex-digit hash of (normalised what, op type); None without a counterexample."""
    if not counterexample or not counterexample.get("mismatch"):
        return None
    key = f"{normalise(str(counterexample['mismatch'].get('what', '')))}|{op_type(counterexample)}"
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def groups(rows: Iterable[Row]) -> list[FailureGroup]:
    """Failing rows grouped by (clause, signature), biggest group first.

    Each group has the clause, the signature, one example ``what`` label, the rows (implementation,
    profile) it covers and ``raw``: how many raw failures (test-level shrinks) carried it.
    """
    found: dict[tuple[str, str], FailureGroup] = {}
    for row in rows:
        if row.get("verdict") not in BAD:
            continue
        counts = row.get("signatures") or {row.get("signature") or "no-counterexample": 1}
        for sig, raw in counts.items():
            group = found.setdefault(
                (row["clause"], sig),
                {
                    "clause": row["clause"],
                    "signature": sig,
                    "raw": 0,
                    "cells": [],
                    "what": ((row.get("counterexample") or {}).get("mismatch") or {}).get("what") or row.get("reason"),
                },
            )
            group["raw"] += raw
            group["cells"].append(f"{row['implementation']}/{row['profile']}")
    return sorted(found.values(), key=lambda g: (-g["raw"], g["clause"], g["signature"]))


def render(rows: Iterable[Row]) -> str:
    """One line per distinct failure: raw count, clause, signature, where, what."""
    lines = [
        f"{g['raw']:>4}x  {g['clause']:<44} {g['signature']}  {', '.join(sorted(set(g['cells'])))}\n       {g['what']}"
        for g in groups(rows)
    ]
    return "\n".join(lines) if lines else "no failures"


def text_signature(reason: str | None) -> str:
    """The signature of a failure with no mismatch (an assertion, a crash): its normalised reason."""
    return hashlib.sha256(normalise(str(reason or "")).encode()).hexdigest()[:12]
