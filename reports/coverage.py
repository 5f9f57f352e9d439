"""Which inputs reached which implementation: per input feature (ktc/judge/features.py), the examples
that carried it, per implementation, summed over clauses; and the gaps.  A feature the reference drew
that an implementation never received is a gap in the evidence for that implementation, not a pass,
unless its target says why it is not sent (``not_sent`` in the target of results.json)."""

from __future__ import annotations

from typing import TypedDict

from .schema import Provenance, Row

REFERENCE = "reference"
NotSent = dict[str | None, dict[str, str]]  # implementation -> feature -> why its target does not send it


class Coverage(TypedDict):
    """The examples that carried each feature, per implementation, overall and per clause."""

    implementations: list[str]
    features: dict[str, dict[str, int]]
    clauses: dict[str, dict[str, dict[str, int]]]


def table(rows: list[Row]) -> Coverage:
    """{"implementations": [...], "features": {feature: {implementation: examples}},
    "clauses": {clause: {feature: {implementation: examples}}}}"""
    per_feature: dict[str, dict[str, int]] = {}
    per_clause: dict[str, dict[str, dict[str, int]]] = {}
    for row in rows:
        impl = row["implementation"]
        for name, count in (row.get("features") or {}).items():
            bump(per_feature.setdefault(name, {}), impl, count)
            bump(per_clause.setdefault(row["clause"], {}).setdefault(name, {}), impl, count)
    return {
        "implementations": sorted({r["implementation"] for r in rows}),
        "features": dict(sorted(per_feature.items())),
        "clauses": dict(sorted(per_clause.items())),
    }


def bump(counts: dict[str, int], key: str, by: int) -> None:
    counts[key] = counts.get(key, 0) + by


def gaps(found: Coverage, not_sent: NotSent) -> list[tuple[str, str, str | None]]:
    """(feature, implementation, the reason it is not sent or None) for every feature the reference drew
    on a clause the implementation was judged on, and that the implementation never received: a gap is
    reported only against what a target ran (the leader-change cluster runs four clauses, not all)."""
    others = [i for i in found["implementations"] if i != REFERENCE and received_any(found, i)]
    return [
        (name, impl, not_sent.get(impl, {}).get(name))
        for impl in others
        for name in drawn_for(found, impl)
        if not found["features"][name].get(impl)
    ]


def drawn_for(found: Coverage, impl: str) -> list[str]:
    """The features the reference drew on the clauses ``impl`` received anything on, in feature order."""
    ran = [by_feature for by_feature in found["clauses"].values() if any(by.get(impl) for by in by_feature.values())]
    drawn = {name for by_feature in ran for name, by in by_feature.items() if by.get(REFERENCE)}
    return [name for name in found["features"] if name in drawn]


def received_any(found: Coverage, impl: str) -> bool:
    """Whether ``impl`` was judged on anything (an implementation that ran nothing, e.g. a container tier
    without a Docker engine, says why in its rows; it has no gaps of its own)."""
    return any(by.get(impl) for by in found["features"].values())


def text(found: Coverage, not_sent: NotSent) -> list[str]:
    """The table as lines for summary.txt: features x implementations, then each gap."""
    impls = found["implementations"]
    if not found["features"] or len(impls) < 2:
        return []
    width = max(len(name) for name in found["features"])
    lines = [
        "",
        "input features reaching each implementation (examples):",
        f"  {'':<{width}} " + " ".join(f"{i:>14.14}" for i in impls),
    ]
    lines += [
        f"  {name:<{width}} " + " ".join(f"{by.get(i, 0):>14}" for i in impls) for name, by in found["features"].items()
    ]
    missing = gaps(found, not_sent)
    unexplained = [g for g in missing if g[2] is None]
    lines.append(
        f"  gaps: {len(missing)} features the reference drew never reached an implementation; "
        f"{len(unexplained)} without a reason"
    )
    lines += [
        f"  gap {impl}: {name}" + (f" (not sent: {why})" if why else " (no reason: a gap in the evidence)")
        for name, impl, why in missing
    ]
    idle = [i for i in impls if i != REFERENCE and not received_any(found, i)]
    return lines + ([f"  judged on nothing (see its rows for why): {', '.join(idle)}"] if idle else [])


def not_sent_of(provenance: Provenance) -> NotSent:
    return {t.get("implementation"): t.get("not_sent") or {} for t in provenance.get("targets", ())}
