"""The mutation report: counts and score as data first (``summary``), then rendered as Markdown.

Score = killed / (mutants - no-ops - reviewed equivalents).  A timeout counts as killed (the suites
noticed: the mutant made the model loop), an error as survived (nothing was shown wrong).
"""

from __future__ import annotations

import json
import os
import statistics
import tomllib
from collections import Counter
from pathlib import Path

from .mutants import Mutant
from .runner import Outcome

EQUIVALENT = Path(__file__).with_name("equivalent.toml")


def reviewed_equivalents(path: Path | None = None) -> dict[str, str]:
    """mutant key -> one line of reasoning, from the reviewed file: the user's, read when the report is
    written (a run in a copy of the tree reads the original's, reviewed while the run went on)."""
    origin = os.environ.get("KTC_MUTATION_ORIGIN")
    path = path or (Path(origin) / "mutation" / "equivalent.toml" if origin else EQUIVALENT)
    data = tomllib.loads(path.read_text()) if path.exists() else {}
    return {e["key"]: e["reason"] for e in data.get("equivalent", [])}


def classify(outcome: Outcome, equivalents: dict[str, str]) -> str:
    if outcome.status == "survived" and outcome.key in equivalents:
        return "equivalent"
    return {"timeout": "killed", "error": "survived"}.get(outcome.status, outcome.status)


def median(values: list[float]):
    return round(statistics.median(values), 2) if values else None


def summary(outcomes: list[Outcome], equivalents: dict[str, str], wall_s: float) -> dict:
    kinds = Counter(classify(o, equivalents) for o in outcomes)
    judged = kinds["killed"] + kinds["survived"]
    killed_s = [o.seconds for o in outcomes if classify(o, equivalents) == "killed"]
    return {
        "mutants": len(outcomes),
        **{k: kinds[k] for k in ("killed", "survived", "equivalent", "no-op")},
        "timeouts": sum(o.status == "timeout" for o in outcomes),
        "errors": sum(o.status == "error" for o in outcomes),
        "score": round(kinds["killed"] / judged, 4) if judged else None,
        "wall_s": round(wall_s, 1),
        "median_kill_s": median(killed_s),
        "max_kill_s": max(killed_s, default=None),
        "median_kill_cpu_s": median([o.cpu for o in outcomes if classify(o, equivalents) == "killed"]),
        "survivor_cpu_s": median([o.cpu for o in outcomes if classify(o, equivalents) == "survived"]),
        "stale_equivalents": sorted(
            k for k in equivalents if any(o.key == k and o.status != "survived" for o in outcomes)
        ),
    }


def write(
    out_dir: Path,
    mutants: list[Mutant],
    outcomes: list[Outcome],
    equivalents: dict[str, str],
    wall_s: float,
    command: str,
) -> dict:
    out_dir.mkdir(parents=True, exist_ok=True)
    facts = summary(outcomes, equivalents, wall_s)
    by_key = {m.key: m for m in mutants}
    rows = [
        {
            **o.__dict__,
            "class": classify(o, equivalents),
            "module": by_key[o.key].module,
            "line": by_key[o.key].line,
            "function": by_key[o.key].function,
        }
        for o in outcomes
    ]
    (out_dir / "mutation.json").write_text(
        json.dumps({"summary": facts, "command": command, "mutants": rows}, indent=1)
    )
    (out_dir / "mutation.md").write_text(markdown(facts, by_key, outcomes, equivalents, command))
    return facts


def markdown(facts: dict, by_key: dict, outcomes: list[Outcome], equivalents: dict[str, str], command: str) -> str:
    lines = [f"# Mutation report: `{command}`", "", "| measure | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in facts.items() if k != "stale_equivalents"]
    lines += ["", *(f"- reviewed equivalent no longer survives (remove it): `{k}`" for k in facts["stale_equivalents"])]
    lines += ["", "## Surviving mutants", ""]
    for o in sorted(outcomes, key=lambda o: o.key):
        if classify(o, equivalents) == "survived":
            m = by_key[o.key]
            lines += [
                f"### `{o.key}` — {m.module}:{m.line} in `{m.function}` ({o.status}, {o.seconds} s)",
                "",
                "```diff",
                m.diff().rstrip(),
                "```",
                "",
            ]
    lines += ["## Killed: the clauses whose tests killed them", "", "| clause | mutants |", "|---|---|"]
    clauses = Counter(c for o in outcomes if o.status == "killed" for c in (o.clauses or ("(no clause)",)))
    lines += [f"| {c} | {n} |" for c, n in clauses.most_common()]
    return "\n".join(lines) + "\n"
