"""Every client library ktc judges, as declarations (library.py), and how each driver is launched.

The Python libraries install from PyPI into venvs of ktc's cache (venvs.py); the two planted-fault drivers run
on ktc's own wire client (planted.py).  The drivers of other languages (the Java client, franz-go, Sarama,
KafkaJS) are declared in ``ktc.implementations.clients.drivers.catalog`` as ``LIBRARIES``; ``registry()`` adds
them after the Python ones.  ``DEFAULT`` names the libraries ``./run conformance`` judges (chosen by cost: each
is a few seconds warm); the rest are one ``--impl client:<name>`` away.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

from ktc.implementations.clients.drivers.catalog import LIBRARIES
from ktc.implementations.clients.library import Library

VENV = "ktc.implementations.clients.venvs:launch"


def planted(library: Library, version: str) -> list[str]:
    """A planted-fault driver: ktc's own interpreter, its fault named after ``planted-``."""
    return [sys.executable, "-m", "ktc.implementations.clients.planted", library.name.removeprefix("planted-")]


PYTHON = (
    Library("kafka-python", "python", "2.3.3", ("2.0.2", "2.3.3", "3.0.12"), VENV),
    Library("aiokafka", "python", "0.12.0", ("0.10.0", "0.12.0"), VENV),
    Library("confluent-kafka", "python", "2.6.0", ("2.3.0", "2.6.0", "2.16.1"), VENV),
)
PLANTED = (
    Library("planted-lat-delta", "python", "1", ("1",), planted),
    Library("planted-max-unset", "python", "1", ("1",), planted),
)
DEFAULT = ("confluent-kafka", "kafka-python", "aiokafka")  # with their broker, about 25 s warm on one worker


def other_languages() -> tuple[Library, ...]:
    """The drivers of the other languages' libraries, declared beside their sources."""
    return LIBRARIES


def registry() -> dict[str, Library]:
    """Every library by name: the Python ones, the planted faults, then the other languages'; a name declared
    twice is refused (one library would silently hide the other)."""
    every = (*PYTHON, *PLANTED, *other_languages())
    twice = sorted({library.name for library in every if sum(other.name == library.name for other in every) > 1})
    if twice:
        raise ValueError(f"client libraries declared twice: {', '.join(twice)}")
    return {library.name: library for library in every}


def install(names: list[str]) -> int:
    """Install (or build) each named library's driver into ktc's cache at its pinned version; one line for each
    that cannot be had here.  What ``./run setup`` calls, so no run waits for a download.

    One thread per language, the languages at once: a Go build takes the CPU while Maven and npm wait on the
    network, and Maven's part waits for the lock ktc's broker fetch holds (on an empty cache the Java driver
    waited 36 s for it while the Go builds had not yet begun).  Within a language one after the other: the
    second Go build finds the standard library the first compiled."""
    known = registry()
    lanes: dict[str, list[Library]] = {}
    for name in names:
        lanes.setdefault(known[name].language, []).append(known[name])
    with ThreadPoolExecutor(max_workers=max(1, len(lanes))) as pool:
        for failures in pool.map(install_in_turn, lanes.values()):
            for line in failures:
                print(line, file=sys.stderr)
    return 0


def install_in_turn(libraries: list[Library]) -> list[str]:
    """Each library's driver at its default version, in order; a line for each that cannot be had."""
    from .library import Unavailable, launcher_of

    failures = []
    for library in libraries:
        try:
            launcher_of(library)(library, library.default_version)
        except (Unavailable, OSError) as error:
            failures.append(f"run: client {library.name} {library.default_version} cannot be judged here: {error}")
    return failures


def main(argv: list[str]) -> int:
    """``--default``: the --impl options of the libraries ./run conformance judges; ``--install [NAME ...]``:
    install their drivers (every library's without names, the default ones with ``--default``); ``--only
    LANGUAGE`` or ``--except LANGUAGE`` after ``--install`` keeps or leaves out one language's (./run builds the
    Go ones in its Go lane, one build at a time, beside the downloads)."""
    if argv[:1] == ["--default"]:
        print(" ".join(f"--impl client:{name}" for name in DEFAULT))
        return 0
    if argv[:1] == ["--install"]:
        return install_command(argv[1:])
    print(USAGE, file=sys.stderr)
    return 2


USAGE = (
    "usage: python -m ktc.implementations.clients.libraries --default"
    " | --install [--default | --only LANGUAGE | --except LANGUAGE] [NAME ...]"
)


def install_command(argv: list[str]) -> int:
    """``--install``'s arguments: an optional ``--only``/``--except LANGUAGE``, then library names (none: all)."""
    known, language, exclude = registry(), None, False
    if argv == ["--default"]:
        return install(list(DEFAULT))
    if argv[:1] in (["--only"], ["--except"]):
        if len(argv) < 2 or argv[1] not in languages():
            given = f" {argv[1]!r}" if len(argv) > 1 else ""
            print(
                f"{argv[0]} needs a language, not{given or ' nothing'}; known: {', '.join(languages())}",
                file=sys.stderr,
            )
            return 2
        exclude, language, argv = argv[0] == "--except", argv[1], argv[2:]
    options = [word for word in argv if word.startswith("-")]
    if options:
        print(f"unknown option {options[0]}; {USAGE.removeprefix('usage: ')}", file=sys.stderr)
        return 2
    unknown = sorted(set(argv) - set(known))
    if unknown:
        print(f"unknown client libraries: {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    chosen = argv or list(known)
    if language is not None:
        chosen = [name for name in chosen if (known[name].language == language) != exclude]
    return install(chosen)


def languages() -> list[str]:
    return sorted({library.language for library in registry().values()})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
