"""``ktc matrix``: Apache Kafka release after release, each fetched from Maven Central, started, judged
under its own profile (specs/kafka-versions.toml) and stopped, by one ``ktc run`` child per release; then
the version x clause table (reports/matrix.py) as matrix.txt, matrix.json and matrix.html.

The default releases are the newest patch of every line from 3.5 on that Maven Central lists (asked once,
remembered in the cache; offline, the last list seen or the table's own).  A progress line is printed per
release with its wall time.  Ctrl-C stops the release in progress (its child cleans up its broker) and
writes the table of the releases that finished.

``--client NAME [--versions LIST]`` (a family's ``Releases``: ktc/cli/matrix_releases.py) judges a client
library's releases instead, side by side in one run.  Either way every fail or error cell is listed under the
table with its counterexample and the command that replays it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ktc.cli import matrix_releases
from ktc.cli import run as cli_run
from ktc.cli.common import UsageError
from ktc.usage import report_root


def add_parser(sub) -> None:
    matrix = sub.add_parser(
        "matrix",
        help="judge every Kafka release line (or a client library's releases) in turn; a version x clause table",
    )
    matrix.add_argument(
        "--kafka-versions",
        metavar="LIST",
        help="comma-separated x.y.z releases (default: the newest patch of every line from 3.5 "
        "that Maven Central lists)",
    )
    matrix_releases.add_arguments(matrix)
    matrix.add_argument(
        "--report",
        default="ktc-report",
        metavar="DIR",
        help="report root: the matrix goes to DIR/<UTC time>-<id>/ (default ./ktc-report)",
    )
    matrix.add_argument("--workers", default="0", type=cli_run.workers, help="pytest-xdist workers per release")
    matrix.add_argument(
        "--hypothesis-profile",
        default="dev",
        choices=["dev", "ci", "nightly"],
        help="as for ktc run (default dev: 40 examples per test)",
    )
    matrix.add_argument(
        "--impl-timeout", type=cli_run.timeout_arg, default=300.0, metavar="SECONDS", help="as for ktc run"
    )


def cmd_matrix(args) -> int:
    root = report_root(args.report)
    target = matrix_releases.target_of(args)
    if target is not None:
        return cmd_releases(args, root, *target)
    chosen, source = chosen_versions(args.kafka_versions)
    cli_run.check_pytest_args(args.pytest_args)
    directory = cli_run.new_run_directory(root)
    print(f"ktc matrix: {len(chosen)} releases ({source}): {', '.join(chosen)}; report {directory}", flush=True)
    columns, code = run_all(args, chosen, directory)
    return finish(directory, columns, code, len(chosen))


def cmd_releases(args, root: Path, axis, name: str) -> int:
    """A family target's releases (``--client kafkajs``), judged in one run."""
    cli_run.check_pytest_args(args.pytest_args)
    chosen, source = matrix_releases.releases(axis, name, args.versions)
    directory = cli_run.new_run_directory(root)
    print(f"ktc matrix: {name}, {len(chosen)} releases ({source}): {', '.join(chosen)}; report {directory}", flush=True)
    columns, code = matrix_releases.run_all(args, axis, name, chosen, directory)
    return finish(directory, columns, code, len(chosen), matrix_releases.explain(axis, name))


def chosen_versions(given: str | None) -> tuple[list[str], str]:
    """The releases to judge, and where the list came from; a bad one is a usage error naming it."""
    from ktc.specs import versions

    if given is None:
        return default_versions()
    chosen = [v.strip() for v in given.split(",") if v.strip()]
    if not chosen:
        raise UsageError("--kafka-versions: expected comma-separated releases, e.g. 3.7.2,3.9.2")
    from ktc.kafka.processes import provision

    for version in chosen:
        try:
            versions.line_of(version)
            provision.check_release(version)
        except (versions.VersionError, provision.ProvisionError) as error:
            raise UsageError(f"--kafka-versions: {error}") from None
    return chosen, "given with --kafka-versions"


def default_versions() -> tuple[list[str], str]:
    """The newest patch of every line from 3.5: Maven Central's list, else the cached one, else the table's."""
    from ktc.kafka.processes import provision
    from ktc.specs import versions

    releases, source = provision.known_releases()
    if not releases:
        return versions.last_known(), f"the last known releases of specs/kafka-versions.toml: {source}"
    return versions.newest_patches(releases), f"the newest patch of each line, from {source}"


def run_all(args, chosen: list[str], directory: Path) -> tuple[list, int]:
    """One ``ktc run`` per release, in order; stops at the first that was interrupted."""
    columns, code = [], 0
    for n, version in enumerate(chosen, 1):
        column, code = run_one(args, version, directory, f"[{n}/{len(chosen)}]")
        columns.append(column)
        if code >= 128:  # a signal: the user wants out
            break
    return columns, code


def run_one(args, version: str, directory: Path, step: str):
    from ktc.reports import matrix
    from ktc.specs import versions

    profile = versions.profile_for(version)
    print(f"ktc matrix: {step} Kafka {version} under {profile} ...", flush=True)
    runs = directory / "runs" / version
    started = time.monotonic()
    runs.mkdir(parents=True, exist_ok=True)
    code = cli_run.Child(run_argv(args, version, runs), dict(os.environ), log=runs / "ktc-run.log").wait()
    wall = time.monotonic() - started
    report = runs / "latest" if (runs / "latest").exists() else None
    problem = None if code in cli_run.FINISHED else f"ktc run exited {code} (see {runs / 'ktc-run.log'})"
    column = matrix.column(version, profile, wall, report, problem)
    print(f"ktc matrix: {step} Kafka {version}: {matrix.tally(column)} in {wall:.0f} s", flush=True)
    return column, code


def run_argv(args, version: str, runs: Path) -> list[str]:
    return matrix_releases.ktc_run(["--impl", "kafka", "--kafka-version", version], args, runs, args.pytest_args)


def finish(directory: Path, columns: list, code: int, wanted: int, explain=None) -> int:
    from ktc.reports import matrix, render

    table = matrix.build(columns, explain or matrix.kafka_changes)
    paths = matrix.write(directory, table)
    print(render.render("matrix", table), end="")
    print("ktc matrix: wrote " + ", ".join(str(p) for p in paths))
    if code >= 128 or len(columns) < wanted:  # a signal: a client matrix's one run, or a Kafka release's
        finished = sum(1 for column in columns if not column.problem)
        print(f"ktc matrix: interrupted after {finished} of {wanted} releases", file=sys.stderr)
        return code
    return 1 if table["unexplained"] or any(c["problem"] for c in table["versions"]) else 0


COMMANDS = {"matrix": cmd_matrix}
