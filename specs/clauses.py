"""The clause registry: every normative statement of the KIPs, as data with provenance.

One TOML file per KIP (``kip-32.toml`` ...).  Each clause has a stable id, a one-line
statement, a verbatim quote and the kind of text it is quoted from, a status, the profiles it
holds in, deviations of real Kafka, and ambiguity notes.

Quote kinds (``quote_source``):
  ``kip``           the KIP's own text, vendored in ``texts/`` and checked verbatim by ``problems()``
  ``kafka-source``  a file of Apache Kafka's source, cited by ``quote_url``: a permalink pinned to one
                    commit and line range (comment markers and line breaks joined); checked for form here,
                    verbatim against that commit by suites/selftest/test_registry.py when a mirror exists
  ``kafka-docs``    Kafka's documentation (protocol message ``about`` texts, config docs), cited the same way
  ``kafka-pr``      the description of a merged apache/kafka pull request, cited by its URL (a change Kafka made
                    that no KIP states, such as a removal; checked for form only)
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .profiles import get as get_profile
from .profiles import names as profile_names

HERE = Path(__file__).parent
TEXTS = HERE / "texts"
EXCERPTS = TEXTS / "kafka-excerpts.toml"  # the lines of Kafka's source that clauses quote, at their permalinks
QUOTE_KINDS = ("kip", "kafka-source", "kafka-docs", "kafka-pr")
KAFKA_PERMALINK = re.compile(r"https://github\.com/apache/kafka/blob/[0-9a-f]{40}/[\w./-]+#L\d+(-L\d+)?")
KAFKA_PULL = re.compile(r"https://github\.com/apache/kafka/pull/\d+")
STATUSES = ("accepted", "draft", "abandoned", "under-discussion")


class SpecError(ValueError):
    """A clause file that does not follow the schema."""


@dataclass(frozen=True)
class Deviation:
    profiles: tuple[str, ...]
    versions: str
    note: str
    source: str


@dataclass(frozen=True)
class Clause:
    id: str
    kip: str
    statement: str
    quote: str
    quote_file: str  # the vendored KIP text (kind kip), else ""
    status: str
    profiles: tuple[str, ...]
    ambiguity: str | None = None
    deviations: tuple[Deviation, ...] = field(default=())
    quote_kind: str = "kip"
    quote_url: str = ""

    def holds_in(self, profile: str) -> bool:
        """Whether the clause holds in ``profile``: listed for it or for a profile it extends."""
        return any(p in self.profiles for p in get_profile(profile).lineage)

    @property
    def quoted_from(self) -> str:
        """Where the quote is from, in words: the KIP text's file, or the Kafka permalink."""
        return self.quote_file if self.quote_kind == "kip" else f"{self.quote_kind}: {self.quote_url}"


@dataclass(frozen=True)
class Kip:
    id: str
    title: str
    status: str
    text: str
    url: str
    clauses: tuple[Clause, ...]


def _clause(kip: dict[str, Any], raw: dict[str, Any], path: Path) -> Clause:
    allowed = {"id", "statement", "quote", "quote_source", "quote_url", "status", "profiles", "ambiguity", "deviation"}
    if unknown := raw.keys() - allowed:
        raise SpecError(f"{path.name}: clause {raw.get('id')!r} has unknown keys {sorted(unknown)}")
    kind = raw.get("quote_source", "kip")
    if kind not in QUOTE_KINDS:
        raise SpecError(f"{path.name}: clause {raw['id']!r}: quote_source must be one of {', '.join(QUOTE_KINDS)}")
    deviations = tuple(
        Deviation(tuple(d["profiles"]), d["versions"], d["note"], d["source"]) for d in raw.get("deviation", ())
    )
    return Clause(
        raw["id"],
        kip["id"],
        raw["statement"],
        raw["quote"],
        kip.get("text", "") if kind == "kip" else "",
        raw["status"],
        tuple(raw["profiles"]),
        raw.get("ambiguity"),
        deviations,
        kind,
        raw.get("quote_url", ""),
    )


def _load(path: Path) -> Kip:
    try:
        data = tomllib.loads(path.read_text())
        head = data["kip"]
        clauses = tuple(_clause(head, raw, path) for raw in data["clause"])
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as error:
        raise SpecError(f"{path.name}: malformed clause file ({type(error).__name__}: {error})") from None
    return Kip(head["id"], head["title"], head["status"], head.get("text", ""), head["url"], clauses)


@functools.cache
def kips() -> tuple[Kip, ...]:
    return tuple(_load(p) for p in sorted(HERE.glob("kip-*.toml"), key=lambda p: int(p.stem.split("-")[1])))


@functools.cache
def all_clauses() -> dict[str, Clause]:
    """Every clause by id, in KIP order."""
    return {c.id: c for kip in kips() for c in kip.clauses}


def problems() -> list[str]:
    """Everything wrong with the registry itself: quotes not found verbatim, bad statuses or profiles."""
    found: list[str] = []
    seen: set[str] = set()
    for kip in kips():
        for c in kip.clauses:
            found += _clause_problems(kip, c, seen)
            seen.add(c.id)
    return found


def _quote_problems(c: Clause) -> list[str]:
    """A KIP quote must occur verbatim in the vendored KIP text; a Kafka quote needs a pinned permalink and must
    occur verbatim in the vendored lines it names."""
    if c.quote_kind == "kip":
        if not c.quote_file:
            return [f"{c.id}: quote_source kip, but {c.kip} has no vendored text in specs/texts"]
        quoted = c.quote in _text(c.quote_file)
        return [] if quoted else [f"{c.id}: quote not found verbatim in {c.quote_file}: {c.quote[:60]!r}"]
    if c.quote_kind == "kafka-pr":
        found = KAFKA_PULL.fullmatch(c.quote_url)
        return (
            []
            if found
            else [
                f"{c.id}: a kafka-pr quote needs quote_url, a github.com/apache/kafka/pull/N "
                f"address (got {c.quote_url!r})"
            ]
        )
    if not KAFKA_PERMALINK.fullmatch(c.quote_url):
        return [
            f"{c.id}: a {c.quote_kind} quote needs quote_url, a github.com/apache/kafka permalink "
            f"pinned to a commit and lines (got {c.quote_url!r})"
        ]
    excerpt = kafka_excerpts().get(c.quote_url)
    if excerpt is None:
        return [f"{c.id}: no excerpt of {c.quote_url} in specs/texts/{EXCERPTS.name}"]
    quoted = " ".join(c.quote.split()) in source_text(excerpt)
    return [] if quoted else [f"{c.id}: quote not found verbatim at {c.quote_url}: {c.quote[:60]!r}"]


@functools.cache
def kafka_excerpts() -> dict[str, str]:
    """Each quoted permalink of Apache Kafka's source and the lines it names, vendored (specs/texts)."""
    with open(EXCERPTS, "rb") as file:
        return {excerpt["url"]: excerpt["lines"] for excerpt in tomllib.load(file)["excerpt"]}


def source_text(lines: str) -> str:
    """Source lines as a quote reads them: comment markers dropped, whitespace collapsed."""
    kept = [re.sub(r"^\s*(\*+|//+)", "", line) for line in lines.splitlines()]
    return " ".join(" ".join(kept).split())


def _clause_problems(kip: Kip, c: Clause, seen: set[str]) -> list[str]:
    out = []
    if c.id in seen or not c.id.startswith(kip.id + "."):
        out.append(f"{c.id}: duplicate id or id not prefixed with {kip.id}.")
    out += _quote_problems(c)
    if c.status not in STATUSES:
        out.append(f"{c.id}: status {c.status!r} not in {STATUSES}")
    bad = [p for p in c.profiles + tuple(p for d in c.deviations for p in d.profiles) if p not in profile_names()]
    if bad or not c.profiles:
        out.append(f"{c.id}: unknown or missing profiles {bad}")
    return out


@functools.cache
def _text(name: str) -> str:
    return (TEXTS / name).read_text()
