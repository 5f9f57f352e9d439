"""Every client library ktc judges, as declarations (library.py), and how each driver is launched.

The Python libraries install from PyPI into venvs of ktc's cache (venvs.py); the two planted-fault drivers run
on ktc's own wire client (planted.py).  The drivers of other languages (the Java client, franz-go, Sarama,
KafkaJS) are declared in ``ktc.implementations.clients.drivers.catalog`` as ``LIBRARIES``; ``registry()`` adds
them after the Python ones.  ``DEFAULT`` names the libraries ``./run conformance`` judges (chosen by cost: each
is a few seconds warm); the rest are one ``--impl client:<name>`` away.
"""

from __future__ import annotations

import sys

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
    that cannot be had here.  What ``./run setup`` calls, so no run waits for a download."""
    from .library import Unavailable, launcher_of

    known = registry()
    for name in names:
        library = known[name]
        try:
            launcher_of(library)(library, library.default_version)
        except (Unavailable, OSError) as error:
            print(f"run: client {name} {library.default_version} cannot be judged here: {error}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    """``--default``: the --impl options of the libraries ./run conformance judges; ``--install [NAME ...]``:
    install their drivers (every library's without names)."""
    if argv[:1] == ["--default"]:
        print(" ".join(f"--impl client:{name}" for name in DEFAULT))
        return 0
    if argv[:1] == ["--install"]:
        unknown = sorted(set(argv[1:]) - set(registry()))
        if unknown:
            print(f"unknown client libraries: {', '.join(unknown)}; known: {', '.join(registry())}", file=sys.stderr)
            return 2
        return install(argv[1:] or list(registry()))
    print("usage: python -m ktc.implementations.clients.libraries --default | --install [NAME ...]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
