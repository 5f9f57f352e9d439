"""How fast a kill becomes a small counterexample: ``python -m mutation --shrink N``.

For N killed mutants of the journal (a stable sample by ``--seed``) the test that killed each one is
run again, alone, under the ``mutation-shrink`` profile (the ci profile's examples, with shrinking;
conftest.py) and ``--hypothesis-show-statistics``.  Measured per mutant: seconds Hypothesis spent
generating (time to first failure) and shrinking, CPU seconds, and the size of the counterexample
ktc reports (operations after the CreateTopics).  A pinned test (no Hypothesis) is counted apart:
there is nothing to shrink.  Data first (``summary``), Markdown last (``render``).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from ktc.plugin.state import ROWS_KEY

from .report import median
from .runner import IMPL, ROOT, Outcome, applied, in_child

PROFILE = "mutation-shrink"
PHASE_TIME = re.compile(r"during (generate|shrink) phase \(([\d.]+) seconds\)")


@dataclass(frozen=True)
class Shrunk:
    key: str
    test: str
    status: str  # failed again | crashed (the mutant raised) | passed (flaky kill) | timeout | error
    generate_s: float | None  # None: nothing generated (a pinned test, or an @example failed first)
    shrink_s: float | None
    cpu: float
    ops: int | None  # operations after CreateTopic in the reported counterexample


class Counterexample:
    """A pytest plugin that keeps the size of the first failing test's counterexample (from ktc's rows,
    which the report carries in its user properties)."""

    def __init__(self, out: Path):
        self.out = out

    def pytest_runtest_logreport(self, report):
        if not report.failed or self.out.exists():
            return
        rows = json.loads(dict(report.user_properties).get(ROWS_KEY, "[]"))
        found = next((r["counterexample"] for r in rows if r.get("counterexample")), None)
        if found is None:  # the mutant raised (an ImplementationCrash): no counterexample history
            self.out.write_text("crash")
            return
        self.out.write_text(str(sum(op["type"] != "CreateTopic" for op in found["history"]["ops"])))


def args_for(test: str, seed: int) -> list[str]:
    return [
        test,
        "--rootdir",
        str(ROOT),
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        f"--impl={IMPL}",
        f"--hypothesis-seed={seed}",
        "--hypothesis-show-statistics",
    ]


def measure(job: tuple, workdir: Path, seed: int, timeout_s: float) -> Shrunk:
    """Run one killed mutant's killing test again, with shrinking (a worker task: runner.run_all)."""
    mutant, test = job
    out, log = workdir / "counterexample-size", workdir / "shrink.log"
    out.unlink(missing_ok=True)
    with applied(mutant, mutant.mutated_source(), workdir):
        code, cpu = in_child(args_for(test, seed), Counterexample(out), log, timeout_s, PROFILE)
    phases = {name: float(s) for name, s in PHASE_TIME.findall(log.read_text(errors="replace"))}
    size = out.read_text() if out.exists() else None
    status = {None: "timeout", 0: "passed", 1: "crashed" if size == "crash" else "failed again"}.get(code, "error")
    return Shrunk(
        mutant.key,
        test,
        status,
        phases.get("generate"),
        phases.get("shrink"),
        round(cpu, 2),
        int(size) if size and size.isdigit() else None,
    )


def chosen(mutants: list, outcomes: list[Outcome], count: int, seed: int) -> list[tuple]:
    """Up to ``count`` killed mutants (by a test, not a timeout) with the test that killed each."""
    by_key = {m.key: m for m in mutants}
    killed = sorted((o for o in outcomes if o.status == "killed" and o.test and o.key in by_key), key=lambda o: o.key)
    picked = random.Random(seed).sample(killed, min(count, len(killed)))
    return [(by_key[o.key], o.test) for o in picked]


def summary(rows: list[Shrunk]) -> dict:
    properties = [r for r in rows if r.status in ("failed again", "crashed") and r.shrink_s is not None]
    sizes = [r.ops for r in properties if r.ops is not None]
    return {
        "measured": len(rows),
        "generated_kills": len(properties),
        "pinned_kills": sum(r.status in ("failed again", "crashed") and r.shrink_s is None for r in rows),
        "crashes": sum(r.status == "crashed" for r in rows),
        "not_failing_again": sum(r.status not in ("failed again", "crashed") for r in rows),
        "median_generate_s": median([r.generate_s for r in properties]),
        "median_shrink_s": median([r.shrink_s for r in properties]),
        "max_shrink_s": max((r.shrink_s for r in properties), default=None),
        "median_ops": median(sizes),
        "max_ops": max(sizes, default=None),
    }


def write(out_dir: Path, rows: list[Shrunk], command: str) -> dict:
    facts = summary(rows)
    (out_dir / "shrinking.json").write_text(
        json.dumps({"summary": facts, "command": command, "mutants": [asdict(r) for r in rows]}, indent=1)
    )
    (out_dir / "shrinking.md").write_text(render(facts, rows, command))
    return facts


def render(facts: dict, rows: list[Shrunk], command: str) -> str:
    lines = [
        "# Time to shrink, per killed mutant",
        "",
        f"`{command}`",
        "",
        *(f"- {k.replace('_', ' ')}: {v}" for k, v in facts.items()),
        "",
        "| mutant | test | status | generate s | shrink s | CPU s | ops after CreateTopic |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: -(r.shrink_s or 0)):
        lines.append(f"| `{r.key}` | `{r.test}` | {r.status} | {r.generate_s} | {r.shrink_s} | {r.cpu} | {r.ops} |")
    return "\n".join(lines) + "\n"
