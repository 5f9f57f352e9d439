"""Generated whole histories judged on every clause at once.

A narrower test cites a few clauses; when an implementation's first wrong answer belongs to a clause
that test does not cite, the test's own verdicts become ``unknown`` (explained by that divergence,
ktc/judge/divergence.py) and the test passes.  Here every clause is cited, so the clause that owns the first
wrong answer fails, whatever state the history built to reach it (mutation testing found faults that
only the sentinel, rebuild and leader-change histories of other tests reached).  It needs an
implementation that answers every clause (the reference, Spark, a mutant); any other skips here and
is judged by the narrower tests.  Its skip is no declaration about a clause (the implementation's
capabilities are: ktc/plugin/rows.py decides those first), so it declines as ``unexercised``
(ktc/judge/declined.py): the row is ``unknown`` (unexercised) unless another test reached the clause.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ktc.checks import CHECKS
from ktc.judge.declined import unexercised
from ktc.judge.harness import assert_conforms
from ktc.specs.clauses import all_clauses
from ktc.strategies import histories

EVERY_CLAUSE = tuple(c for c in all_clauses() if c in CHECKS)  # the few without a check judge tables, not histories
SKEW_MS = 120_000


def require_every_clause(impl) -> None:
    lacking = [c for c in EVERY_CLAUSE if impl.capabilities().reason_unsupported(c)]
    if lacking:
        raise unexercised(f"the every-clause test skipped: {impl.name} lacks {len(lacking)} ({lacking[0]}, ...)")


@pytest.mark.clause(*EVERY_CLAUSE)
@given(data=st.data())
def test_generated_histories_agree_with_the_reference_on_every_clause(impl, profile, data):
    require_every_clause(impl)
    brokers = data.draw(st.integers(1, 3), label="brokers")
    assert_conforms(
        impl, data.draw(histories(profile=profile, brokers=brokers, max_ops=16, skew_ms=SKEW_MS if brokers > 1 else 0))
    )
