"""Top-level pytest configuration: Hypothesis profiles.  The ktc plugin itself is ktc/plugin.py,
loaded through the ``pytest11`` entry point of the installed package.

Profiles (select with HYPOTHESIS_PROFILE or --hypothesis-profile):
  dev      quick local runs
  ci       what .ci/run uses: more examples, no deadline, the failing blob printed
  nightly  long runs that hunt for new counterexamples
"""
import os

from hypothesis import HealthCheck, Phase, settings

_common = dict(deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=40, **_common)
settings.register_profile("ci", max_examples=120, **_common)
settings.register_profile("nightly", max_examples=3000, **_common)
# python -m mutation (mutation/): the ci profile's examples, no example database (every mutant starts
# clean) and no shrinking (a kill needs one failing example, not the smallest); a few examples first.
_mutation = dict(_common, print_blob=False, database=None, phases=[Phase.explicit, Phase.generate, Phase.target])
settings.register_profile("mutation-quick", max_examples=12, **_mutation)
settings.register_profile("mutation", max_examples=120, **_mutation)
# python -m mutation --shrink: the ci profile as CI runs it (shrinking on), with no example database.
settings.register_profile("mutation-shrink", max_examples=120, **dict(_common, print_blob=False, database=None))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Shrinking is bounded in CI: a failing run must not spend minutes in the shrinker.  Hypothesis has no
# public setting for it; its engine stops shrinking after MAX_SHRINKING_SECONDS (300 by default).  If a
# Hypothesis release drops the name, nothing breaks: shrinking is then only bounded by Hypothesis itself.
SHRINK_BOUND_S = {"ci": 30, "mutation-shrink": 30}.get(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
if SHRINK_BOUND_S is not None:
    from hypothesis.internal.conjecture import engine as _engine
    if hasattr(_engine, "MAX_SHRINKING_SECONDS"):
        _engine.MAX_SHRINKING_SECONDS = SHRINK_BOUND_S

# Loaded here, at the root, so the xdist controller (which collects nothing) prints the kill table
# and the broker tier's summary lines.
pytest_plugins = ["suites.selftest.killtable", "suites.broker.summary"]
