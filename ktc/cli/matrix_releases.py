"""``ktc matrix --client kafkajs --versions 1.12.0,1.13.0``: a family's target (``implementations.Releases``)
judged release after release, every release in one ``ktc run`` (its ``--impl`` once per release, against what
the family starts once: for the clients one local Apache Kafka), then one column per release.

Each release is prepared before the run (``Releases.check``: a client's driver installed into ktc's cache), so
a typo or a release that cannot be had here is one line and exit 2 before anything starts.  A cell that changes
between neighbouring releases is annotated with the family's known fixes in between (``Releases.fixed``).
"""

from __future__ import annotations

import difflib
import json
import os
import sys
import time
from pathlib import Path

from ktc import implementations
from ktc.cli import run as cli_run
from ktc.cli.common import UsageError
from ktc.cli.run_command import names_tests
from ktc.paths import suites_dir


def add_arguments(matrix) -> None:
    """Each family's target flag (``--client``) and ``--versions``, the releases of that target."""
    for axis in implementations.releases():
        matrix.add_argument(axis.flag, metavar="NAME", help=axis.help)
    matrix.add_argument(
        "--versions",
        metavar="LIST",
        help="with " + " or ".join(a.flag for a in implementations.releases()) + ": comma-separated releases of it",
    )


def target_of(args) -> tuple[implementations.Releases, str] | None:
    """The family target the arguments name (``--client kafkajs``), or None for Kafka's own matrix."""
    given = [(axis, getattr(args, dest(axis))) for axis in implementations.releases()]
    given = [(axis, name) for axis, name in given if name is not None]
    flags = " or ".join(a.flag for a in implementations.releases())
    if not given:
        if args.versions is not None:
            raise UsageError(f"--versions: the releases of {flags} NAME (Kafka's own releases: --kafka-versions)")
        return None
    if len(given) > 1:
        raise UsageError(f"{flags}: one target at a time")
    axis, name = given[0]
    if args.kafka_versions is not None:
        raise UsageError(f"--kafka-versions: Kafka's own releases; those of {axis.flag} {name} are --versions")
    if name not in axis.names():
        close = difflib.get_close_matches(name, axis.names(), 1)
        hint = f"; did you mean {close[0]}?" if close else f"; known: {', '.join(axis.names())}"
        raise UsageError(f"{axis.flag} {name!r}: unknown{hint}")
    return axis, name


def dest(axis: implementations.Releases) -> str:
    return axis.flag.removeprefix("--").replace("-", "_")


def releases(axis: implementations.Releases, name: str, given: str | None) -> tuple[list[str], str]:
    """The releases to judge, each prepared now, and where the list came from."""
    if given is None:
        wanted, source = list(axis.default(name)), f"{name}'s declared releases"
    else:
        wanted, source = [v.strip() for v in given.split(",") if v.strip()], "given with --versions"
    if not wanted:
        raise UsageError(f"--versions: expected comma-separated releases of {name}, e.g. {axis.default(name)[0]}")
    twice = sorted({v for v in wanted if wanted.count(v) > 1})
    if twice:
        raise UsageError(f"--versions: {', '.join(twice)} given twice")
    print(f"ktc matrix: preparing {name} {', '.join(wanted)} ...", flush=True)
    for release in wanted:
        try:
            axis.check(name, release)
        except implementations.SettingError as error:
            raise UsageError(f"--versions: {error}") from None
    return wanted, source


def run_all(args, axis: implementations.Releases, name: str, wanted: list[str], directory: Path):
    """One ``ktc run`` of every release; a column per release (columns, exit code)."""
    runs = directory / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    log = runs / "ktc-run.log"
    print(f"ktc matrix: {name}: one ktc run of {len(wanted)} releases (log {log}) ...", flush=True)
    started = time.monotonic()
    code = cli_run.Child(run_argv(args, axis, name, wanted, runs), dict(os.environ), log=log).wait()
    problem = None if code in cli_run.FINISHED else f"ktc run exited {code} (see {log})"
    columns = columns_of(axis, name, wanted, runs / "latest" if (runs / "latest").exists() else None, problem)
    print(f"ktc matrix: {name}: {len(wanted)} releases in {time.monotonic() - started:.0f} s", flush=True)
    return columns, code


def columns_of(axis: implementations.Releases, name: str, wanted: list[str], report: Path | None, problem):
    """A column per release out of the one run's report, each printed as a progress line."""
    from ktc.reports import matrix

    named = implementation_names(report)
    columns = []
    for release in wanted:
        column = matrix.implementation_column(release, named.get(axis.spec(name, release)), report, problem)
        print(f"ktc matrix: {name} {release}: {matrix.tally(column)} in {column.wall_s:.0f} s", flush=True)
        columns.append(column)
    return columns


def implementation_names(report: Path | None) -> dict[str, str]:
    """--impl value -> the name its rows carry, from the run's provenance."""
    if report is None or not (report / "results.json").exists():
        return {}
    provenance = json.loads((report / "results.json").read_text()).get("provenance", {})
    return {i["spec"]: i["name"] for i in provenance.get("implementations", ()) if i.get("spec")}


def run_argv(args, axis: implementations.Releases, name: str, wanted: list[str], runs: Path) -> list[str]:
    """``ktc run`` with every release's --impl, on the family's suites unless the arguments after -- name tests."""
    given = list(args.pytest_args or ())
    tests = [] if names_tests(given, suites_dir()) else [str(suites_dir() / t) for t in axis.tests]
    impls = [option for release in wanted for option in ("--impl", axis.spec(name, release))]
    return ktc_run(impls, args, runs, [*tests, *given])


def explain(axis: implementations.Releases, name: str):
    """The note of a cell that changes between two releases: the known fixes in between that bear on its clause."""
    from ktc.reports.matrix import clause_of

    def note(older: str, newer: str, kind: str, row: str) -> str:
        fixes = axis.fixed(name, older, newer, clause_of(row))
        return ", ".join(fixes) or f"changed (no known fix of {name} names it)"

    return note


def ktc_run(targets: list[str], args, runs: Path, after: list[str]) -> list[str]:
    """The ``ktc run`` of a matrix: its targets, its report under ``runs``, the matrix's workers, profile and
    timeout, and what goes to pytest (``after``)."""
    return [
        *(sys.executable, "-m", "ktc", "run", *targets, "--report", str(runs), "--workers", args.workers),
        *("--hypothesis-profile", args.hypothesis_profile, f"--impl-timeout={args.impl_timeout:g}"),
        *(["--", *after] if after else []),
    ]
