"""Checks: one function per observable aspect, registered under the clause ids it decides, one module
per KIP (schemathesis's ``checks`` is the model: one registry, one signature).

Every check has the same signature, ``check(scenario, compare) -> None``: it walks the history
and calls ``compare.eq(op_index, what, expected, observed)`` for each value the clause governs
(expected from the reference, observed from the implementation), or ``compare.holds(...)`` for
an invariant of the observation alone.  ``run_check`` turns that into a Verdict; a check that
found nothing to compare yields None (the clause was not exercised by this history).

Checks are written so that each compares only its own clause's projection: records whose
``now - ts`` overflows belong to KIP-937.int64-wraparound, not to the before/after bounds, so a
mutant is blamed on the clause it breaks.
"""

from ktc.checks import kip32, kip33, kip228, kip870, kip937  # noqa: F401  (each registers its checks)
from ktc.checks.registry import CHECKS, Compare, check, owner_at, run_check

__all__ = ["CHECKS", "Compare", "check", "owner_at", "run_check"]
