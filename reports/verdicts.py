"""The one vocabulary of verdicts, and the one order in which they merge.

Every layer speaks it: a check's verdict on one example (ktc/checks/verdicts.py), a test's row and the
merged row of results.json (reports/schema.py: ``Row``), the columns every renderer counts, the cells of
the HTML page and the version matrix, and the verdict properties of JUnit XML.  It lives here, in the
lowest layer that needs it (stdlib only), so that reports/ reads it and the judge and the plugin import it.

``Validity``: what was found.  ``pass`` (every decided example agreed), ``fail`` (an example disagreed with
the model), ``error`` (something could not be judged: an answer no clause decides, a broken plug-in
contract, a crash), ``unknown`` (nothing was decided; ``Unknown`` says why) and ``unsupported`` (the
implementation declares it does not implement the clause or profile, or cannot run the history).

``Outcome``: what a reader counts, once expectations files are applied (reports/outcomes.py): ``pass``,
``unexpected fail`` (a fail or error no expectation names), ``expected`` (a known deviation: an entry
names the row with the verdict it has), ``unknown`` and ``not applicable`` (``unsupported``).

The order, weakest first (``ORDER``)::

    unknown (unexercised) < unsupported < unknown < pass < error < fail

Merging keeps the strongest: the row of a clause several tests (or examples, or profiles) contribute
to is the strongest contribution.  Why this order:

- Evidence beats its absence.  ``unknown`` means no example decided the clause (a broker's clock
  interval could not, a request was lost with its connection, an earlier divergence explains the
  difference), not that an example went wrong; so a decided ``pass`` elsewhere is the row's answer, and
  a row is never dragged to ``unknown`` by a test that happened to decide nothing.
- A ``fail`` or ``error`` anywhere is never hidden: one counterexample refutes any number of passes, and
  an answer ktc could not judge says the pass may be wrong.  ``fail`` outranks ``error`` because it
  carries a counterexample a reader can replay; an error only says judging stopped.
- ``unsupported`` is weaker than ``unknown``: the implementation ran nothing there, while an unknown row
  ran and could not decide.  A test that only failed to reach the clause (``unexercised``) is weakest
  of all, so any other test decides the row; left alone it reads ``unknown`` (unexercised).

The same order ranks outcomes (``OUTCOME_ORDER``): a known deviation ranks below an unexpected failure
(that is what a reader must see first) and above a pass.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any


class Validity(enum.StrEnum):
    """A verdict's word, in results.json's ``verdict`` field and in a check's ``Verdict.validity``."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    UNKNOWN = "unknown"
    UNSUPPORTED = "unsupported"


class Unknown(enum.StrEnum):
    """Why a verdict is ``unknown`` (results.json's ``unknown`` field)."""

    UNDECIDED = "undecided"  # examples ran; none could be decided
    UNEXERCISED = "unexercised"  # no example reached the clause
    SKIPPED = "skipped"  # the test stopped on its own (a skip, or its own xfail mark) before deciding


class Outcome(enum.StrEnum):
    """A row as the reports count it (reports/outcomes.py: ``outcome``)."""

    PASS = "pass"
    UNEXPECTED = "unexpected fail"
    EXPECTED = "expected"
    UNKNOWN = "unknown"
    NOT_APPLICABLE = "not applicable"


V, U = Validity, Unknown
ORDER: tuple[tuple[Validity, Unknown | None], ...] = (
    (V.UNKNOWN, U.UNEXERCISED),
    (V.UNSUPPORTED, None),
    (V.UNKNOWN, None),
    (V.PASS, None),
    (V.ERROR, None),
    (V.FAIL, None),
)
SHOWN = (V.UNSUPPORTED, V.UNKNOWN, V.PASS, V.ERROR, V.FAIL)  # the verdicts a merged row can have, weakest first
BAD = (V.FAIL, V.ERROR)  # the verdicts that fail a run (unless an expectation names them)
OUTCOME_ORDER = (Outcome.NOT_APPLICABLE, Outcome.UNKNOWN, Outcome.PASS, Outcome.EXPECTED, Outcome.UNEXPECTED)


def rank(verdict: str, unknown: str | None = None) -> int:
    """A verdict's place in ``ORDER`` (an unknown's kind decides only whether it is unexercised)."""
    kind = U.UNEXERCISED if verdict == V.UNKNOWN and unknown == U.UNEXERCISED else None
    return ORDER.index((Validity(verdict), kind))


def row_rank(row: Mapping[str, Any]) -> int:
    """A row's (or a contribution's) place in ``ORDER``."""
    return rank(row["verdict"], row.get("unknown"))


def stronger(candidate: Mapping[str, Any], held: Mapping[str, Any]) -> bool:
    """Whether ``candidate`` wins a merge against ``held`` (a tie keeps what is held)."""
    return row_rank(candidate) > row_rank(held)


def strongest(verdicts: Iterable[str], default: str = V.UNKNOWN) -> Validity:
    """The strongest of several verdicts (a test's examples of one clause), ``default`` when there are none."""
    return Validity(max(verdicts, key=rank, default=default))


def outcome_rank(outcome: str) -> int:
    return OUTCOME_ORDER.index(Outcome(outcome))
