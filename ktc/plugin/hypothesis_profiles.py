"""ktc's Hypothesis profiles, registered and loaded only in a ktc session (the plugin, or the clone's
conftest.py), so a project that merely has ktc installed keeps its own Hypothesis settings.

  dev      ``ktc run``'s, ``ktc matrix``'s and ``./run tests``' default (40 examples per test): minutes
  ci       three times the examples: ``HYPOTHESIS_PROFILE=ci ./run tests``
  nightly  long runs that hunt for new counterexamples
  mutation-quick, mutation, mutation-shrink   python -m mutation (mutation/); mutation also the kill table's mutants
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

# No explain phase: after a failure it traces every line of every shrink step (sys.settrace) to print which lines
# only failing examples ran; ktc prints the clause, its quote, the counterexample and a replay line instead.  The
# replays of test_failure_output.py, two runs each in alternation on an idle VM: 22.3 and 20.6 s against 26.9 and
# 21.3 s with it; the strategies' shrink self-tests, which shrink on purpose, 17 s -> 2 s.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
COMMON = dict(deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
# mutation: the ci profile's examples, no example database (every mutant starts clean) and no
# shrinking (a kill needs one failing example, not the smallest); a few examples first.
MUTATION = dict(COMMON, print_blob=False, database=None, phases=[Phase.explicit, Phase.generate, Phase.target])
PROFILES = {
    "dev": dict(max_examples=40, **COMMON),
    "ci": dict(max_examples=120, **COMMON),
    "nightly": dict(max_examples=3000, **COMMON),
    "mutation-quick": dict(max_examples=12, **MUTATION),
    "mutation": dict(max_examples=120, **MUTATION),
    "mutation-shrink": dict(max_examples=120, **dict(COMMON, print_blob=False, database=None)),
}
# Shrinking is bounded in CI: a failing run must not spend minutes in the shrinker.  Hypothesis has no
# public setting for it; its engine stops after MAX_SHRINKING_SECONDS (300 by default).  If a release
# drops the name, nothing breaks: shrinking is then bounded by Hypothesis alone.
SHRINK_BOUND_S = {"dev": 30, "ci": 30, "mutation-shrink": 30}


def load(name: str | None = None) -> str:
    """Register every profile and load ``name`` (default $HYPOTHESIS_PROFILE, else dev); return it."""
    name = name or os.environ.get("HYPOTHESIS_PROFILE", "dev")
    for profile, values in PROFILES.items():
        settings.register_profile(profile, **values)
    settings.load_profile(name)
    bound_shrinking(SHRINK_BOUND_S.get(name))
    return name


def current() -> str:
    """The name of the loaded profile (as HYPOTHESIS_PROFILE would select it again)."""
    return os.environ.get("HYPOTHESIS_PROFILE", "dev")


def bound_shrinking(seconds: int | None) -> None:
    from hypothesis.internal.conjecture import engine

    if seconds is not None and hasattr(engine, "MAX_SHRINKING_SECONDS"):
        engine.MAX_SHRINKING_SECONDS = seconds
