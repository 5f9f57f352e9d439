"""Apache Kafka release lines as data (``kafka-versions.toml``): the profile a version is judged under,
how a broker's ApiVersions answer names its line, and the changes between lines with their JIRA/KIP.

``profile_for("3.7.2")`` is ``kafka-3.7``; ``line_by_api("kafka-3.6", {"Produce": 10, ...})`` picks
3.7 among the lines that extend a profile discovery matched by configs; ``changes_between("3.7.2",
"3.8.1")`` lists what a client sees change from one to the other.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .profiles import all_profiles

VERSIONS_FILE = Path(__file__).with_name("kafka-versions.toml")
RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")  # a release, not a candidate or snapshot
PREFIX = re.compile(r"^(\d+)\.(\d+)\.(\d+)")


class VersionError(ValueError):
    """A version ktc has no line for, or a versions file that does not follow the schema."""


@dataclass(frozen=True)
class Line:
    line: str  # "3.7"
    profile: str
    last_known: str  # the newest patch known when the file was written
    api_max: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Change:
    id: str  # a JIRA or KIP
    what: str
    first: str  # the first release with the change
    switches: tuple[str, ...]
    clauses: tuple[str, ...]
    affected: str = ""  # for a bug: the releases that have it, "a-b"


def key(version: str) -> tuple[int, int, int]:
    """(major, minor, patch) of an x.y.z version (a suffix such as -rc1 is ignored); VersionError otherwise."""
    found = PREFIX.match(version)
    if found is None:
        raise VersionError(f"not a Kafka release: {version!r} (expected x.y.z, e.g. 3.9.2)")
    major, minor, patch = (int(x) for x in found.groups())
    return major, minor, patch


@functools.cache
def in_span(version: str, span: str) -> bool:
    """Whether ``version`` lies in ``span``, "a-b" (both ends included) or a single release."""
    low, _, high = span.partition("-")
    return key(low) <= key(version) <= key(high or low)


@functools.cache
def lines() -> tuple[Line, ...]:
    data = tomllib.loads(VERSIONS_FILE.read_text())
    found = tuple(
        Line(d["line"], d["profile"], d["last_known"], tuple(sorted(d.get("api_max", {}).items())))
        for d in data["line"]
    )
    unknown = [ln.profile for ln in found if ln.profile not in all_profiles()]
    if unknown:
        raise VersionError(f"{VERSIONS_FILE.name}: unknown profiles {unknown}")
    return found


@functools.cache
def changes() -> tuple[Change, ...]:
    data = tomllib.loads(VERSIONS_FILE.read_text())
    return tuple(
        Change(d["id"], d["what"], d["first"], tuple(d["switches"]), tuple(d["clauses"]), d.get("affected", ""))
        for d in data["change"]
    )


def line_of(version: str) -> Line:
    """The release line of ``version``: VersionError for one older than the first line or unknown."""
    major, minor, _patch = key(version)
    for ln in lines():
        if ln.line == f"{major}.{minor}":
            return ln
    newest = lines()[-1]
    if (major, minor) > key(newest.last_known)[:2]:
        return newest  # a line newer than this file: judged as the newest known until the file says otherwise
    raise VersionError(
        f"Kafka {version} is older than ktc's first line ({lines()[0].line}); "
        f"lines known: {', '.join(ln.line for ln in lines())}"
    )


def profile_for(version: str) -> str:
    return line_of(version).profile


def line_by_api(profile: str, api_max: dict[str, int]) -> Line | None:
    """Among the lines whose profile extends ``profile``, the one whose ApiVersions maxima match."""
    lineage = {name: p.lineage for name, p in all_profiles().items()}
    for ln in lines():
        if profile in lineage[ln.profile] and ln.api_max and all(api_max.get(a) == v for a, v in ln.api_max):
            return ln
    return None


def changes_between(older: str, newer: str) -> list[Change]:
    """The changes first released after ``older`` and at or before ``newer``."""
    return [c for c in changes() if key(older) < key(c.first) <= key(newer)]


def introduced_between(older: str, newer: str) -> list[Change]:
    """The bugs (changes with an ``affected`` range) whose first affected release is after ``older`` and at or
    before ``newer``: what made a release go wrong where the one before it was right."""
    return [c for c in changes() if c.affected and key(older) < key(c.affected.split("-")[0]) <= key(newer)]


def newest_patches(releases: list[str], oldest_line: str = "3.5") -> list[str]:
    """The newest x.y.z of every line from ``oldest_line`` on, among ``releases``."""
    best: dict[tuple[int, int], str] = {}
    floor = tuple(int(x) for x in oldest_line.split("."))
    for version in releases:
        if RELEASE.match(version) and key(version)[:2] >= floor:
            line = key(version)[:2]
            if line not in best or key(version) > key(best[line]):
                best[line] = version
    return [best[line] for line in sorted(best)]


def last_known() -> list[str]:
    """The newest patch of every line as this file knows them (the offline answer)."""
    return [ln.last_known for ln in lines()]
