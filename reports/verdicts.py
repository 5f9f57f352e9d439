"""The row verdicts and their one order, weakest first: how rows merge across the tests that cite a
clause (the strongest wins), and the order every summary counts them in.

``unexercised`` is a contribution only (a test whose examples never reached the clause): the weakest,
so other tests decide the row, and a row left unexercised is reported as ``unknown``.  A decided
``pass`` outranks ``unknown`` (a test whose examples a broker's clock could not decide): the row is
pass when some test decided it and none failed.  Failures and errors always win.
"""
from __future__ import annotations

ORDER = ("unexercised", "unsupported", "unknown", "pass", "error", "fail")
SHOWN = ORDER[1:]  # the verdicts a merged row can have
BAD = ("fail", "error")  # the verdicts that fail a run


def rank(verdict: str) -> int:
    return ORDER.index(verdict)
