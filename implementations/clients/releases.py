"""The clients' part of ``ktc matrix`` (``implementations.protocol.Releases``): ``ktc matrix --client kafkajs
--versions 1.12.0,1.13.0`` judges each release of a library in one ``ktc run`` of suites/clients, against one
local Apache Kafka, and names the fix of drivers/sources.toml where a clause's cell changes between releases.

A release is prepared before the run (its driver installed or built into ktc's cache, once), so a release that
cannot be had here (a typo the registry refuses, a missing toolchain) is one line before any broker starts.
Without ``--versions`` a library's declared ``versions`` are judged: the releases either side of each fix.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache

from ktc.implementations.clients.drivers.build import HERE
from ktc.implementations.clients.libraries import registry
from ktc.implementations.clients.library import Library, Unavailable, launcher_of
from ktc.implementations.protocol import Releases, SettingError

RELEASE = re.compile(r"^v?\d+(\.\d+)*([-+]?[A-Za-z][\w.-]*)?$")  # 1.12.0, Go's v1.20.1, 2.0.0-beta.1; not 1.x


def names() -> list[str]:
    return list(registry())


def library_of(name: str) -> Library:
    known = registry()
    if name not in known:
        raise SettingError(f"unknown client library {name!r}; known: {', '.join(known)}")
    return known[name]


def default(name: str) -> tuple[str, ...]:
    return library_of(name).versions


def check(name: str, release: str) -> None:
    """Install the release's driver now; ``SettingError`` with the launcher's reason when it cannot be had."""
    library = library_of(name)
    if not RELEASE.match(release):
        raise SettingError(f"{release!r} is not a release of {name} (its pinned one: {library.default_version})")
    try:
        launcher_of(library)(library, release)
    except (Unavailable, OSError) as error:
        raise SettingError(f"{name} {release} cannot be judged here: {error}") from None


def spec(name: str, release: str) -> str:
    return f"client:{name}-{release}"


@cache
def bugs() -> tuple[dict, ...]:
    """sources.toml's fixed bugs (those with a first release without them)."""
    found = tomllib.loads((HERE / "sources.toml").read_text())["bug"]
    return tuple(bug for bug in found if bug.get("first_without"))


def key(release: str) -> tuple[int, ...]:
    """A release's order among its library's: its numbers (``v1.20.1`` -> (1, 20, 1))."""
    return tuple(int(n) for n in re.findall(r"\d+", release))


def fixed(name: str, older: str, newer: str, clause: str) -> list[str]:
    """The fixes of ``clause`` released after ``older`` and by ``newer``: ``tulios/kafkajs#768, fixed by #838``."""
    return [
        described(bug)
        for bug in bugs()
        if bug["library"] == name
        and bug.get("clause") == clause
        and key(older) <= key(bug["last_with"])
        and key(bug["first_without"]) <= key(newer)
    ]


def described(bug: dict) -> str:
    """The bug in a few words: its report and its fix as ``owner/repo#N``, and the releases either side."""
    report, fix = (short(bug[field]) if bug.get(field) else None for field in ("report", "fixed_by"))
    said = f"{report}, fixed by #{fix.rpartition('#')[2]}" if report and fix else f"fixed by {fix or report}"
    return f"{said} ({bug['last_with']} -> {bug['first_without']})"


def short(url: str) -> str:
    """``https://github.com/tulios/kafkajs/issues/768`` -> ``tulios/kafkajs#768``."""
    found = re.match(r"https://github\.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)", url)
    return f"{found.group(1)}#{found.group(2)}" if found else url


RELEASES = Releases(
    flag="--client",
    help="a client library (kafkajs, sarama, ...): judge its releases (--versions; default: those either side of "
    "each fix the drivers' sources.toml records) in one ktc run of suites/clients",
    names=names,
    default=default,
    check=check,
    spec=spec,
    tests=("clients",),
    fixed=fixed,
)
