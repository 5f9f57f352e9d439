"""A profile that extends another differs from its root only where it says (``differs_on`` in
specs/profiles.toml): outside those clauses, the reference under the root answers every generated history
the way the descendant's checks expect.  This is what lets the plugin skip a descendant's run of a test
that the root's run already made (ktc/plugin/state.py ``repeats_root``)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktc.checks import CHECKS, run_check
from ktc.checks.scenario import Scenario
from ktc.reference.model import Model
from ktc.specs.clauses import all_clauses
from ktc.specs.profiles import all_profiles
from ktc.specs.profiles import get as get_profile
from ktc.strategies import histories

DERIVED = [name for name, p in all_profiles().items() if len(p.lineage) > 1]


@pytest.mark.parametrize("name", DERIVED)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_derived_profile_answers_as_its_root_outside_the_clauses_it_differs_on(name, data):
    derived = get_profile(name)
    history = data.draw(histories(profile=name, max_ops=10), label="history")
    expected = Model(derived).run(history)
    observed = Model(get_profile(derived.lineage[-1])).run(replace(history, profile=derived.lineage[-1]))
    scenario = Scenario(history, derived, expected, observed)
    clauses = [
        c
        for c in CHECKS
        if c in all_clauses()
        and all_clauses()[c].holds_in(name)
        and not any(c.startswith(p) for p in derived.differs_on)
    ]
    failed = [v for v in filter(None, (run_check(c, scenario) for c in clauses)) if v.failed]
    assert not failed, f"{name} differs from {derived.lineage[-1]} outside {derived.differs_on}: {failed[0]}"


def test_only_a_profile_that_extends_another_may_skip_runs():
    for profile in all_profiles().values():
        assert bool(profile.differs_on) == (len(profile.lineage) > 1), profile.name
