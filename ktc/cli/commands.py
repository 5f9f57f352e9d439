"""The ``ktc`` command.

  ktc clauses [--check]      list the clause registry; --check fails on gaps (CI runs it)
  ktc profiles               list the profiles and their switches
  ktc run --impl NAME --profile NAMES [--hypothesis-profile dev] [--seed N] [--report DIR] [--baseline RESULTS]
          [--expectations TOML] [-- PYTEST ARGS]
  ktc clean --kafka-bootstrap HOST:PORT [--dry-run]   delete the topics killed runs left (ktc's own only)
  ktc clean --containers [--dry-run]   remove the containers and Docker engine killed runs left (ktc's own only)
                             (ktc clean is the bootstrap and container families' subcommand: implementations/families/)
  ktc report | replay | diff | failures | expectations update   (ktc/cli/reports.py)
  ktc hunt --impl NAME [--budget 30m] [--resume] [--seed N] [--report DIR]   (ktc/hunt/)
  ktc env                    every environment variable ktc reads, and what it means (ktc/environment.py)

Bad input (unknown option, implementation or profile, malformed module:attribute) prints one
line and exits 2.  ``ktc run`` exits 0 when no clause fails or errors, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ktc.cli import audit as cli_audit
from ktc.cli import impl as cli_impl
from ktc.cli import matrix as cli_matrix
from ktc.cli import reports as cli_reports
from ktc.cli import run as cli_run
from ktc.cli.common import EXIT_USAGE, Parser, UsageError
from ktc.cli.progress import Watcher
from ktc.hunt import command as cli_hunt
from ktc.paths import suites_dir
from ktc.usage import report_root


def installed_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("ktc")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


class PrintVersion(argparse.Action):
    """``--version``: the installed version is looked up only when asked (~20 ms), not on every start."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print ktc's version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"ktc {installed_version()}")
        parser.exit()


def build_parser() -> Parser:
    parser = Parser(
        prog="ktc",
        description="Conformance suite for Kafka record-timestamp semantics",
        epilog="environment variables: 'ktc env' lists every one ktc reads, and what it means",
    )
    parser.add_argument("--version", action=PrintVersion)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    clauses = sub.add_parser("clauses", help="list clauses; --check fails on registry gaps")
    clauses.add_argument("--check", action="store_true")
    sub.add_parser("profiles", help="list profiles and their switches")
    sub.add_parser("env", help="list every environment variable ktc reads, what it means, and those set here")
    run = sub.add_parser("run", help="run the suites against an implementation")
    run.add_argument("--impl", action="append", help="built-in name or package.module:attribute (repeatable)")
    run.add_argument(
        "--profile",
        default="own",
        help="'own' (default): each implementation under the profiles it implements (a broker: the one "
        "detected or given, and the KIP texts on pinned inputs); 'all': every implementation under "
        "every profile; or comma-separated profile names",
    )
    run.add_argument(
        "--hypothesis-profile",
        default="dev",
        choices=["dev", "ci", "nightly"],
        help="examples per test: dev (default) 40, the answer in minutes; ci 120, what ./run tests uses; nightly 3000",
    )
    run.add_argument(
        "--report",
        default="ktc-report",
        metavar="DIR",
        help="report root: each run writes DIR/<UTC time>-<id>/ and, once finished, moves DIR/latest "
        "to it (default ./ktc-report)",
    )
    run.add_argument(
        "--seed",
        type=cli_run.seed_arg,
        metavar="N",
        help="the Hypothesis seed of every test (default: a fresh one, printed as 'seed N'): the same "
        "seed on the same code and targets draws the same examples",
    )
    run.add_argument("--workers", default="2", type=cli_run.workers, help="pytest-xdist workers (0 for none)")
    run.add_argument(
        "--impl-timeout",
        type=cli_run.timeout_arg,
        default=300.0,
        metavar="SECONDS",
        help="bound on each call of an implementation's run(), per 100 histories it is given (default 300; 0 for none)",
    )
    run.add_argument(
        "--show-pytest",
        action="store_true",
        help="show pytest's own output (progress characters, tracebacks) and the JVM and Spark logs on "
        "the terminal; by default they go to pytest.log in the report directory",
    )
    run.add_argument(
        "--self-checks",
        action="store_true",
        help="also run ktc's own quick self-checks (tests that judge no implementation)",
    )
    add_family_options(run)
    add_family_commands(sub)
    cli_reports.add_parsers(sub, run)
    cli_impl.add_parsers(sub)
    cli_matrix.add_parser(sub)
    cli_audit.add_parser(sub)
    cli_hunt.add_parser(sub)
    return parser


def add_family_options(run) -> None:
    """Each implementation family's options (implementations/families/), with their defaults from the environment,
    and the families in ``ktc run --help``'s last lines."""
    from ktc import implementations

    run.epilog = (
        "implementation families: "
        + "; ".join(f"{p.family} ({', '.join(p.builtins)}): {p.description}" for p in implementations.plugins())
        + ". Environment variables (option defaults and the rest): ktc env"
    )
    defaults = implementations.values()  # each option's environment variable, where it has one
    for option in implementations.options():
        extra = {"action": "append", "default": []} if option.repeat else {"default": defaults[option.name]}
        run.add_argument(option.flag, metavar=option.metavar, choices=option.choices, help=option.help, **extra)


def add_family_commands(sub) -> None:
    """The subcommands families bring (``ktc clean``), each with every family's options for it."""
    from ktc import implementations

    for name, parts in implementations.commands().items():
        parser = sub.add_parser(name, help="; ".join(part.help for part in parts))
        for part in parts:
            part.arguments(parser)


def family_command(args) -> int:
    from ktc import implementations

    return implementations.run_command(args.command, args)


def main(argv: list[str] | None = None) -> int:
    from ktc.implementations import SettingError

    try:
        args = parse(sys.argv[1:] if argv is None else list(argv))
        return COMMANDS.get(args.command, family_command)(args)
    except (UsageError, SettingError) as error:
        print(f"ktc: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except ModuleNotFoundError as error:  # a package of one of ktc's extras, needed on this path and missing
        return missing_extra(error)
    except KeyboardInterrupt:
        print("ktc: interrupted", file=sys.stderr)
        return 130


def missing_extra(error: ModuleNotFoundError) -> int:
    """One line naming the pip command, for a package one of ktc's extras brings; anything else is a bug: raised."""
    from ktc.implementations import extra_hint

    hint = extra_hint(error)
    if not hint:
        raise error
    print(f"ktc: error: {error}{hint}", file=sys.stderr)
    return EXIT_USAGE


def parse(argv: list[str]):
    """Our options before ``--``; pytest's after it (``ktc run`` only).  A stray word before ``--``
    (``ktc run reference``) is an error, never a pytest argument."""
    cut = argv.index("--") if "--" in argv else len(argv)
    args = build_parser().parse_args(argv[:cut])
    args.pytest_args = argv[cut + 1 :]
    if args.pytest_args and args.command not in ("run", "matrix"):
        raise UsageError(f"ktc {args.command} takes no arguments after '--'")
    return args


def cmd_clauses(args) -> int:
    from ktc.cli.citations import citations
    from ktc.reports.outcomes import counted
    from ktc.specs import clauses as registry

    counts = citations(suites_dir())
    for c in registry.all_clauses().values():
        print(f"{c.id:<48} {c.status:<17} {c.kip:<8} {c.quote_kind:<12} {counts.get(c.id, 0):>3} tests")
    if not args.check:
        print("\n".join(["", *list_offsets_coverage()]))
        return 0
    problems = registry_problems(registry, counts)
    for line in problems:
        print(f"PROBLEM: {line}", file=sys.stderr)
    print(f"{len(registry.all_clauses())} clauses, {counted(len(problems), 'problem')}", file=sys.stderr)
    return 1 if problems else 0


def list_offsets_coverage() -> list[str]:
    from ktc.checks.kip33 import coverage_lines
    from ktc.specs.profiles import all_profiles

    return coverage_lines({name: p.list_offsets_max_version for name, p in all_profiles().items()})


def registry_problems(registry, counts) -> list[str]:
    from ktc import checks

    known = registry.all_clauses()
    problems = list(registry.problems())
    problems += [f"{c}: no test cites this clause" for c in known if counts.get(c, 0) == 0]
    problems += [f"{c}: cited by a test but not in the registry" for c in counts if c not in known]
    problems += [f"{c}: a check is registered for an unknown clause" for c in checks.CHECKS if c not in known]
    return problems


def cmd_profiles(args) -> int:
    from ktc.specs.profiles import all_profiles

    for profile in all_profiles().values():
        print(f"{profile.name}: {profile.description}")
    return 0


def cmd_env(args) -> int:
    from ktc.environment import listing

    print(listing())
    return 0


def validate_run(args) -> None:
    from ktc import implementations
    from ktc.specs.profiles import ProfileError, get

    for spec in args.impl or ["reference"]:
        try:
            implementations.load(spec, vars(args))
        except implementations.ImplementationError as error:
            raise UsageError(str(error)) from None
    if args.profile not in ("own", "all"):
        for name in args.profile.split(","):
            try:
                get(name.strip())
            except ProfileError as error:
                raise UsageError(f"--profile: {error}, or 'own' (the default) or 'all'") from None
    for line in implementations.check(vars(args), args.impl or (), args.profile):
        print(f"ktc: {line}", file=sys.stderr)


def cmd_run(args) -> int:
    """Validate everything, then run pytest in a child process group that we supervise (ktc/cli/run.py)."""
    root = report_root(args.report)
    validate_run(args)
    gate_inputs = cli_reports.load_gate_inputs(args)
    cli_run.check_pytest_args(args.pytest_args)
    if args.seed is not None and any(a.startswith("--hypothesis-seed") for a in args.pytest_args):
        raise UsageError("give the seed once: --seed N, or --hypothesis-seed=N after --, not both")
    report = cli_run.new_run_directory(root)
    log, watcher = (None, None) if args.show_pytest else (report / LOG_NAME, Watcher())
    print(f"ktc run: {', '.join(args.impl or ['reference'])}; report in {report}", file=sys.stderr, flush=True)
    child = cli_run.Child(pytest_argv(args, report) + list(args.pytest_args), child_env(args), log, watcher)
    code = child.wait()
    if watcher is not None:
        watcher.stop()
    if code in cli_run.FINISHED:
        cli_run.point_latest(root, report)
    budget = SCREEN_LINES - 1 - (watcher.lines if watcher is not None else 0)
    return cli_reports.gate(args, report, finish_run(report, code, log, budget), gate_inputs)


LOG_NAME = "pytest.log"
SCREEN_LINES = 40  # a whole default run, progress included, when every failure is expected


def names_tests(pytest_args, suites: Path) -> bool:
    """Whether the arguments after -- name files, folders or node ids of the suites: then pytest runs those, not
    every suite (an option's value, such as -k's expression or --basetemp's folder, names none)."""
    paths = (Path(a.split("::")[0]).resolve() for a in pytest_args if not a.startswith("-"))
    return any(path.exists() and path.is_relative_to(suites.resolve()) and path != suites.resolve() for path in paths)


def partial(pytest_args, suites: Path) -> bool:
    """A selection that may leave out the test showing an expected deviation: paths inside the suites, -k or -m."""
    return names_tests(pytest_args, suites) or any(a.startswith(("-k", "-m")) for a in pytest_args)


# Suites that judge no implementation (ktc's own tests, its broker and Spark tiers): not collected by a run.
OWN_SUITES = ("selftest", "broker")
OWN_TIER_SUITES = ("spark",)  # only with --self-checks


def pytest_argv(args, report: Path) -> list[str]:
    suites = suites_dir()
    ignored = OWN_SUITES + (() if args.self_checks else OWN_TIER_SUITES)
    where = (
        []
        if names_tests(args.pytest_args or (), suites)
        else [str(suites), *(option for name in ignored for option in ("--ignore", str(suites / name)))]
    )
    argv = [
        sys.executable,
        "-m",
        "pytest",
        *where,
        "--rootdir",
        str(suites.parent),
        "-q",
        "--profile",
        args.profile,
        "--ktc-report",
        str(report),
        "-p",
        "no:cacheprovider",
        "--junitxml",
        str(report / "junit.xml"),
    ]
    argv += [] if args.self_checks else ["--ktc-judged-only"]
    argv += [] if args.seed is None else [f"--hypothesis-seed={args.seed}"]
    argv += ["--ktc-partial"] if partial(args.pytest_args or (), suites) else []
    argv += [f"--impl={spec}" for spec in args.impl or ["reference"]] + [f"--impl-timeout={args.impl_timeout:g}"]
    argv += [f"--ktc-expectations={Path(p).resolve()}" for p in args.expectations or ()] + settings_argv(args)
    return argv + (["-n", args.workers, "--dist", "loadgroup"] if args.workers != "0" else [])


def child_env(args) -> dict:
    """The child's environment: ours, with the Hypothesis profile and the user's directory importable.
    Every ktc setting goes as a pytest option (``settings_argv``), not through the environment."""
    return {
        **os.environ,
        "HYPOTHESIS_PROFILE": args.hypothesis_profile,
        "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")])),
    }


def settings_argv(args) -> list[str]:
    """Every family option given that is also a pytest option, as ``--flag=value`` (each item of a repeatable one)."""
    from ktc import implementations

    argv = []
    for option in implementations.options():
        value = getattr(args, option.name)
        if option.pytest and value:
            argv += [f"{option.flag}={item}" for item in (value if option.repeat else [value])]
    return argv + [f"--ktc-run-options={json.dumps(vars(args))}"]


def finish_run(report: Path, code: int, log: Path | None, budget: int = SCREEN_LINES) -> int:
    """The answer: the table of targets and the root causes (reports' terminal format), rendered from
    results.json alone; or, for a run that did not finish, why in one line and where pytest said more."""
    results = report / "results.json"
    if results.exists() and code in cli_run.FINISHED:
        print(render_answer(results, max(budget - (log is not None), 12)))
    if code == EXIT_NO_TESTS:
        print("ktc: error: no tests were collected; check the -k / --profile / --impl selection", file=sys.stderr)
        return 1
    if code not in cli_run.FINISHED:
        error = last_error(log) if log is not None else None
        said = f": {error}" if error else ""
        print(
            f"ktc: the run did not finish (exit {code}){said}; {report} holds what it wrote, latest was not moved"
            + (f"; pytest's output: {log}" if log is not None else ""),
            file=sys.stderr,
        )
    elif code == 1 and log is not None:
        error = last_error(log) if not results.exists() or judged_nothing(results) else None
        print((f"ktc: error: {error}\n" if error else "") + f"pytest's output (tracebacks, JVM and Spark logs): {log}")
    return code


def render_answer(results: Path, max_lines: int) -> str:
    """results.json as the terminal answer; under GitHub Actions also its annotations (``::error ...``)."""
    import shutil

    from ktc.reports import loading, render
    from ktc.reports.registry import Context

    doc = loading.load_results(results)
    width = shutil.get_terminal_size((120, 40)).columns
    answer = render.render("terminal", doc, Context(report_dir=str(results.parent), width=width, max_lines=max_lines))
    if os.environ.get("GITHUB_ACTIONS"):
        answer += render.render("github", doc, Context(report_dir=str(results.parent)))
    return answer.rstrip("\n")


def judged_nothing(results: Path) -> bool:
    """A results.json without a single row: the run failed before any test judged (a collection error)."""
    try:
        return not json.loads(results.read_text()).get("rows")
    except (OSError, ValueError):
        return True


def last_error(log: Path) -> str | None:
    """The last line of the child's output that names an error, to say why a run stopped."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    said = [line.strip() for line in lines if "error" in line.lower() and line.strip()]
    return said[-1][:300] if said else None


EXIT_NO_TESTS = 5


COMMANDS = {
    "clauses": cmd_clauses,
    "profiles": cmd_profiles,
    "env": cmd_env,
    "run": cmd_run,
    **cli_reports.COMMANDS,
    **cli_impl.COMMANDS,
    **cli_matrix.COMMANDS,
    **cli_audit.COMMANDS,
    **cli_hunt.COMMANDS,
}

if __name__ == "__main__":
    sys.exit(main())
