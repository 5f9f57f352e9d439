"""Compare results: what a CI gate fails on, and what ``ktc diff`` shows.

A gate that fails on every failure is ignored the day a known bug lands; one that fails only on
what is *new* (a failure the baseline did not have, or an expected failure that quietly started
passing) stays on.  Rows are keyed by (clause, implementation, profile).
"""

from __future__ import annotations

from .outcomes import pass_surprises
from .schema import Expected, Key, Row
from .verdicts import BAD

GOOD_BEFORE = ("pass", "unsupported", None)  # None: the baseline has no such row
Change = tuple[Key, str | None, str | None, str | None]  # key, old verdict, new verdict, note
Flagged = tuple[Key, str, str | None]  # key, verdict, note


def key(row: Row) -> Key:
    return row["clause"], row["implementation"], row["profile"]


def index(rows: list[Row]) -> dict[Key, Row]:
    return {key(r): r for r in rows}


def label(k: Key) -> str:
    return f"{k[0]} on {k[1]}/{k[2]}"


def verdict_of(rows: dict[Key, Row], k: Key) -> str | None:
    return rows[k]["verdict"] if k in rows else None


def compare(old_rows: list[Row], new_rows: list[Row]) -> dict[str, list[Change]]:
    """{"regressions", "fixes", "changes"}: lists of (key, old verdict, new verdict, note)."""
    old, new = index(old_rows), index(new_rows)
    out: dict[str, list[Change]] = {"regressions": [], "fixes": [], "changes": []}
    for k in sorted(old.keys() | new.keys()):
        before, after = verdict_of(old, k), verdict_of(new, k)
        if after in BAD and before in GOOD_BEFORE:
            out["regressions"].append((k, before, after, new[k].get("reason")))
        elif before in BAD and after == "pass":
            out["fixes"].append((k, before, after, None))
        elif before != after:
            out["changes"].append((k, before, after, None))
        elif after in BAD and old[k].get("signature") != new[k].get("signature"):
            out["changes"].append(
                (
                    k,
                    before,
                    after,
                    f"signature {old[k].get('signature')} -> {new[k].get('signature')} (a different failure)",
                )
            )
    return out


def render(result: dict[str, list[Change]]) -> str:
    lines = []
    for section in ("regressions", "fixes", "changes"):
        entries = result[section]
        lines.append(f"{section} ({len(entries)}):")
        for k, before, after, note in entries:
            lines.append(f"  {label(k)}: {before or 'absent'} -> {after or 'absent'}" + (f"  ({note})" if note else ""))
    return "\n".join(lines)


def gate(
    new_rows: list[Row], baseline_rows: list[Row] | None, expected: dict[Key, Expected] | None
) -> dict[str, list[Flagged]]:
    """{"new_failures", "unexpected_passes", "expected_failures"} for ``ktc run --baseline/--expectations``.

    ``expected`` maps (clause, implementation, profile) -> expectation entry (``reports.expectations``).
    A failure is new unless an expectation names it or the baseline already had it failing/unknown.  An
    expected row that comes back ``unsupported`` was not judged on this run (a tier left out, as the real-time
    tier without ``--real-time``): neither a new failure nor an unexpected pass.
    """
    baseline = index(baseline_rows) if baseline_rows is not None else None
    annotated = {key(r): r["expected"] for r in new_rows if r.get("expected")}  # expectations/<impl>.toml
    expected = {**annotated, **(expected or {})}
    out: dict[str, list[Flagged]] = {"new_failures": [], "unexpected_passes": [], "expected_failures": []}
    for row in new_rows:
        k, verdict = key(row), row["verdict"]
        if k in expected:
            want = expected[k]["verdict"]
            if verdict == want:
                out["expected_failures"].append((k, verdict, expected[k].get("reason")))
            elif verdict == "unsupported":
                continue  # not judged on this run (an option not given, as --real-time): neither kept nor broken
            elif verdict == "pass" and pass_surprises(expected[k]):
                out["unexpected_passes"].append((k, verdict, f"expected {want}: {expected[k].get('reason')}"))
            elif verdict in BAD or want in BAD:
                out["new_failures"].append((k, verdict, f"expected {want}, got {verdict}: {row.get('reason')}"))
        elif verdict in BAD and (baseline is None or verdict_of(baseline, k) in GOOD_BEFORE):
            out["new_failures"].append((k, verdict, row.get("reason")))
    return out


def render_gate(result: dict[str, list[Flagged]]) -> str:
    lines = [
        f"ktc gate: {len(result['new_failures'])} new failures, {len(result['unexpected_passes'])} unexpected "
        f"passes, {len(result['expected_failures'])} expected failures"
    ]
    lines += [f"  NEW FAILURE      {label(k)}: {v}  ({note})" for k, v, note in result["new_failures"]]
    lines += [f"  UNEXPECTED PASS  {label(k)}  ({note})" for k, v, note in result["unexpected_passes"]]
    return "\n".join(lines)
