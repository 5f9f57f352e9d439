"""A test that judges nothing says why, as data: ``raise unsupported(why)`` or ``raise unexercised(why)``.

The exception carries its verdict (reports/verdicts.py's vocabulary) and its reason; the plugin turns it
into the test's rows (ktc/plugin/rows.py) from those fields, never from a message.  It is a
``unittest.SkipTest``, so pytest shows the test as skipped (with ``str()`` of it) and Hypothesis, inside
``@given``, lets it through at once instead of treating it as a failure to shrink.
"""

from __future__ import annotations

import unittest

from ktc.reports.verdicts import Unknown, Validity


class Declined(unittest.SkipTest):
    """The running test judges none of its clauses: ``validity`` (``unsupported``, or ``unknown`` with
    ``unknown`` its kind) for every one, with ``reason``."""

    def __init__(self, validity: Validity, reason: str, unknown: Unknown | None = None):
        self.validity, self.reason, self.unknown = validity, reason, unknown
        super().__init__(f"{unknown or validity}: {reason}")


def unsupported(reason: str) -> Declined:
    """The implementation does not implement what the test needs (a clause, a profile, a kind of history)."""
    return Declined(Validity.UNSUPPORTED, reason)


def unexercised(reason: str) -> Declined:
    """The test ran on the implementation but reached none of its clauses: the weakest contribution
    (reports/verdicts.py: ``ORDER``), so another test decides the row, or it reads unknown (unexercised)."""
    return Declined(Validity.UNKNOWN, reason, Unknown.UNEXERCISED)
