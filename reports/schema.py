"""The shape of results.json (schema 3), as types: what every renderer may rely on, and nothing more.

Renderers read a results document (a dict loaded from results.json) and never the model, the
clause registry or the plugin: whatever they show is in the document, joined in before it was
written (``ktc/plugin/artifacts.py: attach``).  ``total=False`` marks what older files or other
writers may lack; readers fall back (reports/outcomes.py) instead of failing.  The format itself is
documented in reports/README.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, cast

READABLE = (2, 3)  # schema versions the readers accept; 2 lacks "clauses" and rows' timeline/replay


Key = tuple[str, str, str]  # a row's (clause, implementation, profile)


class Expected(TypedDict, total=False):
    """An expectations file's entry that names the row (a known deviation)."""

    clause: str
    profile: str
    verdict: str
    reason: str
    source: str
    file: str
    undecided: bool  # a partial selection cannot decide the entry (reports/expectations.py)
    inherited: str  # the older version whose file a version nobody wrote one for was held to


class ExpectationsFile(TypedDict, total=False):
    """An expectations file (reports/expectations.py): the implementation (and version) its entries are for."""

    schema_version: int
    implementation: str
    version: str
    expect: list[Expected]


Scalar = bool | int | str | None  # a compared value as results.json keeps it (anything else: its short repr)


class FirstDivergence(TypedDict, total=False):
    """Where a history first departs from the model (ktc/checks/verdicts.py: Divergence)."""

    op_index: int
    op_kind: str
    field: str
    expected: Scalar
    observed: Scalar
    text: str
    cause: str


class MismatchData(TypedDict, total=False):
    """A counterexample's mismatch: the operation, what was compared, both values as their repr."""

    op_index: int | None
    what: str
    expected: str | None
    observed: str | None


class Counterexample(TypedDict, total=False):
    """A failing example, portable (ktc/judge/harness.py: ClauseViolation.counterexample)."""

    clause: str
    implementation: str
    history: object  # the history as ktc/judge/serialize.py writes it
    first_divergence: FirstDivergence | None
    mismatch: MismatchData
    schema_version: int  # counterexample.json's own (reports/loading.py: COUNTEREXAMPLE_SCHEMA)
    profile: str  # counterexample.json: for ktc replay
    implementation_spec: str  # counterexample.json: the --impl it was found on
    implementation_version: str | None  # counterexample.json: the row's
    seed: int | None  # counterexample.json: the row's
    signature: str | None  # counterexample.json: the row's
    tests: list[str]  # counterexample.json: the row's
    target: Target | None  # counterexample.json: where the row was observed, for ktc replay


class ProduceMark(TypedDict):
    """A Produce on a counterexample's timeline: the leader's clock and the bounds that applied (None: unbounded)."""

    op_index: int
    topic: str
    now: int
    before: int | None
    after: int | None
    timestamps: list[int]
    timestamp_type: str


class ClockRow(TypedDict):
    """An operation on a counterexample's timeline: the leader's clock and its partition's segments after it."""

    op_index: int
    kind: str
    at: int
    segments: list[int]
    rolled: int | None
    deleted: list[int]


class Timeline(TypedDict):
    """The numbers a counterexample's timeline is drawn from (ktc/judge/timeline.py)."""

    produces: list[ProduceMark]
    clock: list[ClockRow]
    mismatch_op: int | None


class Row(TypedDict, total=False):
    """One clause x implementation x profile: its verdict and the evidence for it."""

    clause: str
    kip: str
    status: str
    implementation: str
    implementation_version: str | None
    profile: str
    verdict: str  # pass | fail | error | unknown | unsupported (reports/verdicts.py: Validity)
    unknown: str  # an unknown verdict's kind: unexercised | undecided | skipped (reports/verdicts.py)
    examples: int
    tests: list[str]
    seed: int | None
    duration: float
    reason: str | None
    counterexample: Counterexample | None
    first_failure_at: int | None
    first_divergence: FirstDivergence | str | None
    signature: str | None
    signatures: dict[str, int]
    features: dict[str, int]
    expected: Expected
    timeline: Timeline | None  # schema 3: the counterexample's clocks and bounds, for the HTML drawing
    replay: str  # schema 3: fail/error rows: the command that replays it (paths relative to the report)
    decided_by: str  # fail/error rows: the test whose verdict and reason the row carries (the pytest replay runs it)


class Target(TypedDict, total=False):
    """One implementation under test as ``provenance.targets`` records it (the plugin writes one each)."""

    implementation: str
    version: str | None
    description: str
    profile: str  # the profile it is judged under, or "every profile"
    evidence: str  # why that profile, in a few words
    not_run: str | None  # why it ran nothing, or None
    duration_s: float
    duration_summed: bool  # read back (reports/outcomes.py: targets): the time is the rows' summed test time
    counts: dict[str, int]  # read back: its rows per column (reports/outcomes.py: counts)
    requested_profile: str | None  # the --profile it was given, if any
    not_sent: dict[str, str]  # input feature -> why the target never sends it (reports/coverage.py)
    summary: str | None  # its family's one line on how it was judged: a broker's clock, retention, leader moves


class ClauseInfo(TypedDict, total=False):
    """The registry's facts about a clause, copied into results.json's ``clauses`` section."""

    kip: str
    kip_title: str
    status: str
    statement: str
    quote: str
    quote_url: str  # where the quote is from when it is not the KIP text itself
    kip_url: str
    order: int  # the registry's order (KIP by KIP); JSON objects are written with sorted keys


class Document(TypedDict, total=False):
    schema_version: int
    generated_at: str
    provenance: Mapping[str, object]  # the run's: its targets (Target), seed, versions, command
    clauses: dict[str, ClauseInfo]
    rows: list[Row]


class Implementation(TypedDict, total=False):
    """An implementation as ``provenance.implementations`` names it (--impl, in the order given)."""

    name: str
    version: str | None
    spec: str  # the --impl value it was run with


class CollectionError(TypedDict):
    """A test file pytest could not collect: its tests judged nothing."""

    path: str
    error: str


class Provenance(TypedDict, total=False):
    """What the renderers read of a run's provenance (each writer adds its own fields besides)."""

    targets: list[Target]
    implementations: list[Implementation]
    collection_errors: list[CollectionError]
    hypothesis: HypothesisRun
    ktc_git_sha: str | None
    profiles: list[str]


class HypothesisRun(TypedDict, total=False):
    """The run's Hypothesis settings as its provenance records them."""

    seed: int | None
    profile: str
    version: str


def provenance_of(doc: Document) -> Provenance:
    """The document's provenance, as the renderers read it ({} where it has none).  Document.provenance is a
    plain mapping (each writer adds its own fields); its ``targets``, ``implementations`` and
    ``collection_errors`` are the plugin's, of the shapes above: a TypedDict cannot be checked at run time,
    so the one cast of the schema is here."""
    return cast(Provenance, doc.get("provenance") or {})
