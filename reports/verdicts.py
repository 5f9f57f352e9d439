"""The row verdicts and their one order, weakest first: how rows merge across the tests that cite a
clause (the strongest wins), and the order every summary counts them in.

``unexercised`` is a contribution only (a test that ran on the implementation, passed, and whose
examples never reached the clause); a row left unexercised is reported as ``unknown``, "no example
exercised this clause".  It outranks ``unsupported`` (a test that could not run there at all): a clause
that one test cannot run and another ran without reaching is not known, rather than not supported —
e.g. kfake's whole-batch rejection, unreached because kfake never rejects, not unsupported because
the every-clause test skips.  A decided ``pass`` outranks ``unknown`` (a test whose examples a broker's
clock could not decide): the row is pass when some test decided it and none failed.  Failures and
errors always win.
"""
from __future__ import annotations

ORDER = ("unsupported", "unexercised", "unknown", "pass", "error", "fail")
SHOWN = tuple(v for v in ORDER if v != "unexercised")  # the verdicts a merged row can have
BAD = ("fail", "error")  # the verdicts that fail a run


def rank(verdict: str) -> int:
    return ORDER.index(verdict)
