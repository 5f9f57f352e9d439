"""Turn one test's outcome into verdict rows, one per cited clause (and profile it holds in)."""
from __future__ import annotations

from ktc.checks import CHECKS
from ktc.judge import harness
from ktc.reports.dedupe import signature
from ktc.specs import clauses as clause_registry


def violations(exc) -> list:
    """Every ClauseViolation inside an exception (Hypothesis may group several)."""
    if isinstance(exc, harness.ClauseViolation):
        return [exc]
    return [v for sub in getattr(exc, "exceptions", ()) for v in violations(sub)]


def contract_error(exc):
    """The ContractError inside an exception (Hypothesis may group several), if any."""
    if exc is None or isinstance(exc, harness.ContractError):
        return exc
    inner = [*getattr(exc, "exceptions", ()), exc.__cause__, exc.__context__]
    return next(filter(None, (contract_error(sub) for sub in inner)), None)


def rows_for(item, call, report, state) -> list[dict]:
    params = getattr(item, "callspec", None)
    params = params.params if params else {}
    impl = params.get("impl")
    profiles = [params["profile"]] if "profile" in params else list(state.profiles)
    rows = []
    for clause_id in dict.fromkeys(c for m in item.iter_markers("clause") for c in m.args):
        clause = clause_registry.all_clauses().get(clause_id)
        for profile in profiles:
            if clause is not None and clause.holds_in(profile) and not state.repeats_root(impl, profile, [clause_id]) \
                    and state.judges(impl, profile, item):
                row = base_row(clause, impl, profile, item.nodeid)
                timing = {"seed": state.seed, "duration": round(report.duration, 4)}
                found = outcome(clause_id, impl, call, report, state.context.recorder)
                if found["verdict"] == "unexercised" and state.held_to_release_only(impl, profile, item):
                    continue  # a Kafka change pinned under a release's profile says nothing of clauses it missed
                rows.append({**row, **timing, **found, "features": features_of(clause_id, found, state)})
    return rows


def features_of(clause_id: str, found: dict, state) -> dict[str, int]:
    """Input feature -> examples of this clause that carried it (none for an unsupported clause)."""
    stats = state.context.recorder.clauses.get(clause_id)
    return dict(stats.features) if stats is not None and found.get("examples") else {}


def base_row(clause, impl, profile: str, nodeid: str) -> dict:
    return {"clause": clause.id, "kip": clause.kip, "status": clause.status, "profile": profile,
            "implementation": impl.name if impl is not None else "reference",
            "implementation_version": getattr(impl, "version", None), "tests": [nodeid]}


def outcome(clause_id: str, impl, call, report, recorder) -> dict:
    reason = impl.capabilities().reason_unsupported(clause_id) if impl is not None else None
    if reason:
        return {"verdict": "unsupported", "examples": 0, "reason": f"unsupported: {reason}"}
    stats = recorder.clauses.get(clause_id)
    examples = stats.examples if stats else 0
    if report.skipped:
        return skipped_outcome(skip_reason(report))
    if report.failed:
        return failed_outcome(clause_id, call.excinfo, stats)
    if impl is None or (clause_id not in CHECKS and not examples):
        return {"verdict": "pass", "examples": max(examples, 1)}  # a table a test asserted itself, no check
    return passed_outcome(stats)


UNEXERCISED = "unexercised: no example reached this clause"


def skipped_outcome(reason: str) -> dict:
    """A skip that declares a clause or profile not implemented is ``unsupported``; one that only says
    this test did not reach the clause (``unexercised: ...``) is the weakest contribution, so another
    test decides the row, or it reads ``unknown`` (unexercised); any other skip is ``unknown``."""
    if reason.startswith("unexercised"):
        return {"verdict": "unexercised", "examples": 0, "reason": f"{UNEXERCISED} ({reason.split(': ', 1)[1]})"}
    return {"verdict": "unsupported" if reason.startswith("unsupported") else "unknown", "examples": 0,
            "reason": reason}


def skip_reason(report) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


def passed_outcome(stats) -> dict:
    """A test that did not fail: ``error`` when an example could not be judged, ``unknown`` when none
    was decided (each with the first such example's reason and root cause), else ``pass``."""
    if stats is None or stats.examples == 0:
        return {"verdict": "unexercised", "examples": 0, "reason": UNEXERCISED}
    if stats.validities.get("error"):
        return undecided(stats, "error", "", "an example could not be judged")
    if not stats.validities.get("pass"):
        return undecided(stats, "unknown", "no example could be decided: ", "the broker's clock intervals")
    return {"verdict": "pass", "examples": stats.examples}


def undecided(stats, verdict: str, prefix: str, default: str) -> dict:
    row = {"verdict": verdict, "examples": stats.examples,
           "reason": prefix + "; ".join(stats.first_notes.get(verdict, (default,)))}
    divergence = stats.first_divergences.get(verdict)
    return {**row, "first_divergence": divergence} if divergence else row


def failed_outcome(clause_id: str, excinfo, stats) -> dict:
    exc = excinfo.value if excinfo else None
    found = [v for v in violations(exc) if clause_id in v.clauses]
    examples = stats.examples if stats else 0
    if found:
        counterexamples = [v.counterexample(clause_id) for v in found]
        signatures = [signature(c) for c in counterexamples]
        return {"verdict": "fail", "examples": examples, "counterexample": counterexamples[0],
                "first_divergence": counterexamples[0]["first_divergence"],
                "signature": signatures[0], "signatures": {s: signatures.count(s) for s in signatures},
                "first_failure_at": stats.first_failure_at if stats else None,
                "reason": found[0].describe(clause_id).splitlines()[0]}
    if violations(exc):
        return passed_outcome(stats)
    if contract_error(exc) is not None:
        return {"verdict": "error", "examples": examples, "reason": contract_error(exc).reason}
    if isinstance(exc, AssertionError):
        return {"verdict": "fail", "examples": examples, "reason": str(exc).splitlines()[0][:300] if str(exc) else
                "assertion failed"}
    return {"verdict": "error", "examples": examples, "reason": f"{type(exc).__name__}: {exc}"[:300]}
