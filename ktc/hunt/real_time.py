"""``ktc hunt --real-time BUDGET`` on a broker by address: the real-time tier (ktc/judge/realtime.py) once, before
the hunt draws histories, its verdicts one line per clause and in ``real_time.json``.  Retention and rolls are
judged over the broker's own retention passes, which no drawn history can wait for."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ktc.judge.context import UnderTest
from ktc.reports.verdicts import Validity, strongest


def judge(impl: UnderTest, profile: str, directory: Path) -> int:
    """Run the tier when the target has it (else nothing); the number of its failing clauses."""
    session = impl.over_real_time()
    if session is None:
        return 0
    from ktc.judge import realtime

    print(f"ktc hunt: the real-time tier, at most {session.budget_s:g} s", file=sys.stderr, flush=True)
    judged, timing, how = realtime.over_real_time(session, profile)
    rows = [
        {
            "history": planned.name,
            "clause": v.clause,
            "verdict": v.validity.value,
            "why": v.mismatch.what if v.mismatch is not None else "; ".join(v.notes),
            "expected": None if v.mismatch is None else str(v.mismatch.expected),
            "observed": None if v.mismatch is None else str(v.mismatch.observed),
        }
        for planned, verdicts in judged
        for v in verdicts
    ]
    (directory / "real_time.json").write_text(json.dumps({"interval": how, "verdicts": rows}, indent=1) + "\n")
    by_clause: dict[str, list[Validity]] = {}
    for _, verdicts in judged:
        for v in verdicts:
            by_clause.setdefault(v.clause, []).append(v.validity)
    for clause, found in sorted(by_clause.items()):
        print(f"ktc hunt: real time: {clause}: {strongest(found).value}", file=sys.stderr)
    return sum(Validity.FAIL in found for found in by_clause.values())
