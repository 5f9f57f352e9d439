"""``ktc run``: its options (ktc's own and each implementation family's), the checks made before anything starts,
the pytest command line and environment of the supervised child (ktc/cli/run.py runs it), and the answer printed
once it ends: the table of targets from results.json, or why the run did not finish."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ktc.cli import reports as cli_reports
from ktc.cli import run as cli_run
from ktc.cli.common import UsageError
from ktc.cli.progress import Watcher
from ktc.paths import suites_dir
from ktc.usage import report_root


def add_parser(sub):
    """``ktc run``'s parser, with every family's options; the reporting options (ktc/cli/reports.py) join it."""
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
    run.add_argument(
        "--workers",
        type=cli_run.workers,
        help="pytest-xdist workers (default: one more than the targets and than the cores, at most 8; 0 for none)",
    )
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
    return run


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
        extra = {} if option.repeat else {"default": defaults[option.name]}
        choices = {"choices": option.choices} if option.choices else {}
        run.add_argument(option.flag, help=option.help, **option.arguments, **choices, **extra)


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
    args.workers = args.workers or cli_run.default_workers(len(args.impl or ["reference"]))
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
    """The child's environment: ours, with the Hypothesis profile, the user's directory importable and a run id of
    its own (in every topic name: two runs at once on one broker never share a topic, even when both are children
    of one pytest session, which set its own).  Every ktc setting goes as a pytest option (``settings_argv``), not
    through the environment."""
    from ktc.kafka.topics import RUN_ID_ENV, new_run_id  # pure: no broker extra needed

    return {
        **os.environ,
        "HYPOTHESIS_PROFILE": args.hypothesis_profile,
        "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")])),
        RUN_ID_ENV: new_run_id(),
    }


def settings_argv(args) -> list[str]:
    """Every family option given that is also a pytest option, as ``--flag=value`` (each item of a repeatable one)."""
    from ktc import implementations

    argv = []
    for option in implementations.options():
        value = getattr(args, option.name)
        if option.pytest and value:
            given = value if option.repeat else [value]
            argv += [option.flag] if option.switch else [f"{option.flag}={item}" for item in given]
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


COMMANDS = {"run": cmd_run}
