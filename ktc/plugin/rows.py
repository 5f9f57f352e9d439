"""A test's rows, decided from data: one per clause and profile of its plan (ktc/plugin/plan.py).

Each row's verdict (reports/verdicts.py) comes from the implementation's capabilities, the test's own
statistics (the run context's recorder: how many examples reached the clause, and their verdicts) and what
the test raised, as an object: a ``ClauseViolation``, a broken plug-in contract, a ``Declined``
(ktc/judge/declined.py: ``unsupported`` or ``unexercised``, with its reason), a skip.  No verdict is read
out of a message and no pytest report is rewritten: the hooks decide the rows when the test's setup or
call ends (``settle``), and carry them on the report (ktc/plugin/hooks.py).  A failed test whose every
failing row is a known deviation ends as pytest's own xfail (``settle`` returns it to raise).
"""

from __future__ import annotations

import unittest

import pytest

from ktc.checks import CHECKS
from ktc.judge import harness
from ktc.judge.declined import Declined, unsupported
from ktc.plugin import expected
from ktc.plugin.plan import PLAN, RowSpec
from ktc.plugin.state import KtcState
from ktc.reports.dedupe import signature
from ktc.reports.schema import Row
from ktc.reports.verdicts import Unknown, Validity, strongest

ROWS = pytest.StashKey[list]()  # the rows decided for the phase (setup or call) being reported
SKIPS = (pytest.skip.Exception, pytest.xfail.Exception, unittest.SkipTest)  # a test that stopped on its own
UNEXERCISED = "no example reached this clause"


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


def declined_at_setup(item) -> tuple[Declined | None, tuple[str, ...]]:
    """Why the item judges nothing on its implementation (or None), and the clauses it judges: those of its
    plan that hold in its profile, less those the implementation declares unsupported."""
    plan = item.stash[PLAN]
    impl, profile, supported = plan.impl, plan.profile, plan.holding
    if impl is None:
        return None, supported
    caps = impl.capabilities()
    foreign = item.get_closest_marker("kafka_change") is not None and profile in caps.releases
    if profile is not None and profile not in caps.profiles and not foreign:
        return unsupported(f"{impl.name} does not implement profile {profile}"), supported
    if profile in caps.pinned_only and item.get_closest_marker("pinned") is None:
        return unsupported(
            f"{impl.name} is judged under {profile} on pinned inputs only (suites/pinned, suites/deviations)"
        ), supported
    over_time = real_time_test(item)
    reasons = {caps.reason_unsupported(c, over_time) for c in supported} - {None}
    supported = tuple(c for c in supported if not caps.reason_unsupported(c, over_time))
    if plan.cited and not supported:
        return unsupported("; ".join(sorted(reasons))), supported
    return None, supported


def real_time_test(item) -> bool:
    """A test of the real-time tier (``@pytest.mark.real_time``): it judges a broker's ``Capabilities.real_time``."""
    return item.get_closest_marker("real_time") is not None


def judged_clauses(item) -> tuple[str, ...] | None:
    """The clauses the item's setup would judge, or None when its setup would decline it."""
    declined, supported = declined_at_setup(item)
    return None if declined else supported


def settle(item, state: KtcState, raised: BaseException | None) -> BaseException | None:
    """Decide the test's rows (stashed for its report) and annotate them with the expectations that name
    them; return pytest's xfail to raise in place of ``raised`` when every failing row is a known deviation."""
    rows = decide(item, state, raised)
    expected.annotate(rows, state.expected)
    item.stash[ROWS] = rows
    deviation = expected.deviation(rows) if raised is not None else None
    return pytest.xfail.Exception(deviation) if deviation else None


def decide(item, state: KtcState, raised: BaseException | None) -> list[Row]:
    plan, recorder, rows = item.stash[PLAN], state.context.recorder, []
    mark = item.get_closest_marker("xfail")
    for spec in plan.rows:
        found = outcome(spec.clause, plan.impl, raised, recorder, mark, real_time_test(item))
        if found.get("unknown") == Unknown.UNEXERCISED and state.held_to_release_only(plan.impl, spec.profile, item):
            continue  # a Kafka change pinned under a release's profile says nothing of clauses it missed
        rows.append(
            {
                **base_row(spec, plan.impl, item.nodeid),
                "seed": state.seed,
                **found,
                "features": features_of(spec.clause, found, recorder),
            }
        )
    return rows


def features_of(clause_id: str, found: Row, recorder) -> dict[str, int]:
    """Input feature -> examples of this clause that carried it (none for an unsupported clause)."""
    stats = recorder.clauses.get(clause_id)
    return dict(stats.features) if stats is not None and found.get("examples") else {}


def base_row(spec: RowSpec, impl, nodeid: str) -> Row:
    return {
        "clause": spec.clause,
        "kip": spec.kip,
        "status": spec.status,
        "profile": spec.profile,
        "implementation": impl.name if impl is not None else "reference",
        "implementation_version": impl.version if impl is not None else None,
        "tests": [nodeid],
    }


def outcome(clause_id: str, impl, raised: BaseException | None, recorder, xfail_mark=None, over_time=False) -> Row:
    reason = impl.capabilities().reason_unsupported(clause_id, over_time) if impl is not None else None
    if reason:
        return {"verdict": Validity.UNSUPPORTED, "examples": 0, "reason": f"unsupported: {reason}"}
    stats = recorder.clauses.get(clause_id)
    examples = stats.examples if stats else 0
    if raised is not None:
        return raised_outcome(clause_id, raised, stats, xfail_mark)
    if impl is None or (clause_id not in CHECKS and not examples):
        return {"verdict": Validity.PASS, "examples": max(examples, 1)}  # a table a test asserted itself, no check
    return passed_outcome(stats)


def raised_outcome(clause_id: str, raised: BaseException, stats, xfail_mark) -> Row:
    """A test that declined (its verdict and reason as data), stopped on its own (a skip, or a failure its own
    xfail mark expects: unknown, skipped) or failed."""
    if isinstance(raised, Declined):
        return declined(raised)
    if isinstance(raised, SKIPS) or xfail_mark is not None:
        said = xfail_mark.kwargs.get("reason") if xfail_mark is not None else None
        return {
            "verdict": Validity.UNKNOWN,
            "unknown": Unknown.SKIPPED,
            "examples": 0,
            "reason": said or str(raised) or "skipped",
        }
    return failed_outcome(clause_id, raised, stats)


def declined(raised: Declined) -> Row:
    if raised.unknown is Unknown.UNEXERCISED:
        return {
            "verdict": Validity.UNKNOWN,
            "unknown": Unknown.UNEXERCISED,
            "examples": 0,
            "reason": f"{UNEXERCISED} ({raised.reason})",
        }
    return {"verdict": raised.validity, "examples": 0, "reason": str(raised)}


def passed_outcome(stats) -> Row:
    """A test that did not fail: its examples' verdicts merged in the one order (reports/verdicts.py), a ``fail``
    being the row's only with the violation that shows it: ``error`` when an example could not be judged,
    ``pass`` when one was decided, else ``unknown`` (undecided), each undecided one with the first such
    example's reason and root cause; ``unknown`` (unexercised) when no example reached the clause."""
    if stats is None or stats.examples == 0:
        return {"verdict": Validity.UNKNOWN, "unknown": Unknown.UNEXERCISED, "examples": 0, "reason": UNEXERCISED}
    verdict = strongest(v for v, n in stats.validities.items() if n and v != Validity.FAIL)
    if verdict is Validity.PASS:
        return {"verdict": verdict, "examples": stats.examples}
    if verdict is Validity.ERROR:
        return undecided(stats, verdict, "", "an example could not be judged")
    return {
        **undecided(stats, Validity.UNKNOWN, "no example could be decided: ", "the broker's clock intervals"),
        "unknown": Unknown.UNDECIDED,
    }


def undecided(stats, verdict: Validity, prefix: str, default: str) -> Row:
    row: Row = {
        "verdict": verdict,
        "examples": stats.examples,
        "reason": prefix + "; ".join(stats.first_notes.get(verdict, (default,))),
    }
    divergence = stats.first_divergences.get(verdict)
    return {**row, "first_divergence": divergence} if divergence else row


def bad_validity(clause_id: str, found: list) -> Validity:
    """``fail`` when an example violated the clause; ``error`` when the examples that name it could only not be
    judged (an answer no clause decides, a topic never ready): a word for what the implementation did, not for
    what ktc could not see."""
    return Validity.FAIL if any(v.of(clause_id).failed for v in found) else Validity.ERROR


def failed_outcome(clause_id: str, exc: BaseException, stats) -> Row:
    found = [v for v in violations(exc) if clause_id in v.clauses]
    examples = stats.examples if stats else 0
    if found:
        counterexamples = [v.counterexample(clause_id) for v in found]
        signatures = [signature(c) for c in counterexamples]
        return {
            "verdict": bad_validity(clause_id, found),
            "examples": examples,
            "counterexample": counterexamples[0],
            "first_divergence": counterexamples[0]["first_divergence"],
            "signature": signatures[0],
            "signatures": {s: signatures.count(s) for s in signatures},
            "first_failure_at": stats.first_failure_at if stats else None,
            "reason": found[0].describe(clause_id).splitlines()[0],
        }
    if violations(exc):
        return passed_outcome(stats)
    if contract_error(exc) is not None:
        return {"verdict": Validity.ERROR, "examples": examples, "reason": contract_error(exc).reason}
    if isinstance(exc, AssertionError):
        return {
            "verdict": Validity.FAIL,
            "examples": examples,
            "reason": str(exc).splitlines()[0][:300] if str(exc) else "assertion failed",
        }
    return {"verdict": Validity.ERROR, "examples": examples, "reason": f"{type(exc).__name__}: {exc}"[:300]}
