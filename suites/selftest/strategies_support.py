"""What the self-tests of the ``strategies`` package share: example budgets, the search for a reachable or
simplest example, and the check that a bad argument is refused before drawing."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import Phase, find, settings
from hypothesis.errors import InvalidArgument

from ktc.reference.types import TimestampType
from ktc.specs import profiles

# shrinking without Hypothesis's explain phase, which traces every line of every shrink step (sys.settrace) to say
# which lines only failing examples ran: the shrink self-tests of test_strategy_coverage.py 17 s -> 2 s
FIND = settings(max_examples=2000, database=None, phases=[Phase.generate, Phase.shrink])
REACH = settings(FIND, phases=[Phase.generate])  # existence only: stop at the first hit, no shrinking
FAST = settings(max_examples=50, deadline=None, database=None)
NOW = 1_700_000_000_000
PROFILES = profiles.names()
LAT = TimestampType.LOG_APPEND_TIME
MS = dt.timedelta(milliseconds=1)
EACH_PROFILE = pytest.mark.parametrize("profile_name", PROFILES)


def reach(strategy, condition):
    """The first example satisfying ``condition``: proves it is reachable, without shrinking."""
    return find(strategy, condition, settings=REACH)


def simplest(strategy):
    """What every example of ``strategy`` shrinks towards."""
    return find(strategy, lambda _: True, settings=FIND)


def invalid(strategy_call):
    with pytest.raises(InvalidArgument):
        strategy_call().validate()


def epoch_ms(*args) -> int:
    return (dt.datetime(*args, tzinfo=dt.UTC) - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // MS
