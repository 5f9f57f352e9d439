"""Retention and rolling over real time, on a broker ktc did not start (``--kafka-bootstrap ... --real-time 12m``).

One run of the tier (ktc/judge/realtime_plan.py: a topic per history, all at once) judges every clause here:
the first test to need it waits for the broker's own retention passes, the others read its verdicts.  An
implementation without the tier (the reference, a broker ktc started: judged on these clauses by
test_segments.py and kip33/test_list_offsets.py) declines, so its rows come from those tests.
"""

from __future__ import annotations

import pytest

from ktc.judge import realtime, realtime_plan
from ktc.judge.declined import unsupported
from ktc.judge.harness import ClauseViolation, record

RUNS: dict[tuple[str, str], list] = {}  # (implementation, profile) -> the tier's (planned, verdicts)
NOT_HERE = (
    "the real-time tier judges a broker ktc did not start: --impl kafka --kafka-bootstrap HOST:PORT --real-time 12m"
)


def tier(impl, profile: str) -> list:
    """The tier's verdicts on ``impl`` under ``profile``, run once."""
    key = (impl.name, profile)
    if key not in RUNS:
        session = impl.over_real_time()
        if session is None:
            raise unsupported(NOT_HERE)
        RUNS[key] = realtime.over_real_time(session, profile)[0]
    return RUNS[key]


@pytest.mark.real_time
@pytest.mark.parametrize("clause", [pytest.param(c, marks=pytest.mark.clause(c), id=c) for c in realtime_plan.CLAUSES])
def test_retention_and_rolls_over_real_time_agree_with_the_model(impl, profile, clause):
    failed = []
    for planned, verdicts in tier(impl, profile):
        found = record(impl.context.recorder, planned.history, [v for v in verdicts if v.clause == clause])
        failed += [(planned, v) for v in found]
    if failed:
        planned, verdict = failed[0]
        raise ClauseViolation([verdict], planned.history, impl.name)
