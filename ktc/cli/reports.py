"""The reporting subcommands of ``ktc`` and the CI gate of ``ktc run``.

  ktc report RESULTS [--format F] [--out FILE]    render results.json: html (default; index.html next to
                                                  RESULTS), terminal, summary, markdown, github; matrix and
                                                  matrix-html render a matrix.json
  ktc replay FILE [--impl X]                      re-run one counterexample file: FIXED (0) / STILL FAILING (1)
  ktc diff OLD NEW                                regressions, then fixes, then other changes; 1 on regressions
  ktc failures RESULTS                            failures deduplicated by clause and signature, with raw counts
  ktc expectations update RESULTS --out FILE      expected-failure entries from a results file
  ktc run ... --baseline OLD --expectations FILE  fail only on new failures and unexpected passes

Every bad input file (missing, corrupt, another schema version) is one line and exit 2.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

from ktc.cli.common import Parser, UsageError, reachable
from ktc.plugin.expected import known
from ktc.reports import dedupe, diff, expectations, loading


def usage_error(message: str) -> UsageError:
    return UsageError(message)


def guarded(command):
    """Turn the reports layer's InputError into the CLI's one-line exit-2 error."""

    def run(args) -> int:
        try:
            return command(args)
        except loading.InputError as error:
            raise usage_error(str(error)) from None

    run.__doc__ = command.__doc__
    return run


def add_parsers(sub, run) -> None:
    run.add_argument("--baseline", metavar="RESULTS", help="fail only on failures this results file did not have")
    run.add_argument("--expectations", action="append", metavar="TOML", help="expected failures (repeatable)")
    report = sub.add_parser("report", help="render results.json in a format (default: the HTML page)")
    report.add_argument("results")
    report.add_argument(
        "--format",
        default="html",
        metavar="NAME",
        help="html (default), terminal, summary, markdown, github; matrix/matrix-html take a matrix.json",
    )
    report.add_argument("--out", help="file to write (default: index.html next to RESULTS for html, else stdout)")
    replay = sub.add_parser("replay", help="re-run a counterexample file: FIXED or STILL FAILING")
    replay.add_argument("file")
    replay.add_argument("--impl", help="implementation (default: the one recorded in FILE)")
    compare = sub.add_parser("diff", help="compare two results files; exit 1 on regressions")
    compare.add_argument("old")
    compare.add_argument("new")
    failures = sub.add_parser("failures", help="failures deduplicated by clause and signature")
    failures.add_argument("results")
    expect = sub.add_parser("expectations", help="expected-failure files")
    expect_sub = expect.add_subparsers(dest="action", required=True, parser_class=Parser)
    update = expect_sub.add_parser("update", help="write expected failures from a results file")
    update.add_argument("results")
    update.add_argument("--out", required=True, help="TOML file (its reasons and sources are kept)")
    update.add_argument("--impl", help="implementation name (default: the only failing one)")


MATRIX_FORMATS = ("matrix", "matrix-html")


@guarded
def cmd_report(args) -> int:
    """Render RESULTS in ``--format`` to ``--out`` (with its side files) or, for text formats, to stdout."""
    from ktc.reports import render  # every format: loaded only by this command

    if args.format not in render.names():
        raise usage_error(f"--format {args.format}: unknown format; known: {', '.join(render.names())}")
    doc = report_input(args.results, args.format)
    out = args.out or (Path(args.results).with_name("index.html") if args.format == "html" else None)
    from ktc.reports.registry import Context

    context = Context(
        report_dir=str(Path(args.results).parent),
        side_name=Path(out).stem if out else "index",
        width=shutil.get_terminal_size((100, 30)).columns,
    )
    if out is None:
        print(render.render(args.format, doc, context), end="")
        return 0
    started = time.perf_counter()
    paths = render.write(args.format, doc, writable_file(Path(out), "--out"), context)
    sizes = ", ".join(f"{p.name} {p.stat().st_size} bytes" for p in paths)
    print(f"wrote {paths[0]} ({sizes}; {len(doc.get('rows', []))} rows, {time.perf_counter() - started:.2f} s)")
    return 0


def report_input(path: str, fmt: str) -> dict:
    """The document a format reads: a matrix.json table for the matrix formats, else a results file
    (one of schema 2 is joined with the clause texts, timelines and replays it lacks)."""
    if fmt in MATRIX_FORMATS:
        table = loading.read_json(path, "matrix file")
        if not isinstance(table.get("versions"), list) or not isinstance(table.get("rows"), list):
            raise usage_error(f"--format {fmt} renders a matrix.json (written by 'ktc matrix'); {path} is not one")
        return table
    doc = loading.load_results(path)
    if "clauses" not in doc:
        from ktc.plugin.artifacts import attach

        attach(doc)
    return doc


def writable_file(path: Path, flag: str) -> Path:
    """A file we may (over)write: not a directory, in a directory that exists and is writable."""
    if path.is_dir():
        raise usage_error(f"{flag} {path} is a directory; give a file name, e.g. {path / 'index.html'}")
    parent = path.resolve().parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise usage_error(f"{flag} {path}: {parent} is not a writable directory")
    return path


def runnable_history(data: dict, file: str):
    """The counterexample's history, which the reference itself must be able to run: a history it
    cannot run is the file's fault, never the implementation's."""
    from ktc import reference
    from ktc.judge.serialize import FormatError, from_data
    from ktc.specs.clauses import all_clauses

    if data["clause"] not in all_clauses():
        raise usage_error(f"counterexample file {file} names unknown clause {data['clause']!r} (see 'ktc clauses')")
    try:
        history = from_data(data["history"])
        reference.run(history)
    except FormatError as error:
        raise usage_error(f"counterexample file {file} has an unreadable history: {error}") from None
    except Exception as error:
        raise usage_error(
            f"counterexample file {file} holds a history the reference cannot run "
            f"({type(error).__name__}: {error}); is the file edited or from another ktc?"
        ) from None
    return history


@guarded
def cmd_replay(args) -> int:
    from ktc import implementations
    from ktc.judge.harness import ImplementationCrash, judge

    data = loading.load_counterexample(args.file)
    history = runnable_history(data, args.file)
    spec = args.impl or data.get("implementation_spec") or data["implementation"]
    try:
        impl = implementations.load(spec)
    except implementations.ImplementationError as error:
        raise usage_error(str(error)) from None
    retarget(impl, data.get("target") if not args.impl else None)
    try:
        verdicts = judge(impl, [history], [data["clause"]])[0]
    except ImplementationCrash as error:
        print(f"STILL FAILING: {data['clause']} on {impl.name}: {error}")
        return 1
    return replay_outcome(data["clause"], impl.name, verdicts)


def retarget(impl, target) -> None:
    """Replay on the target the failure was seen on (that broker, or that version started again);
    a broker that no longer answers is one line and exit 2, not a verdict."""
    if not target or not hasattr(impl, "retarget"):
        return
    if target.get("bootstrap"):
        try:
            reachable(target["bootstrap"])
        except UsageError as error:
            raise usage_error(f"cannot replay on the broker the failure was seen on: {error}") from None
    impl.retarget(target)
    where = target.get("bootstrap") or target.get("started") or target.get("version")
    print(f"ktc replay: on {where} (as recorded), profile {target.get('requested_profile') or 'as detected'}")


def replay_outcome(clause: str, name: str, verdicts) -> int:
    from ktc.checks.verdicts import render_mismatch

    verdict = next((v for v in verdicts if v.clause == clause), None)
    if verdict is not None and verdict.failed:
        print(f"STILL FAILING: {clause} on {name}: {render_mismatch(verdict.mismatch)}")
        return 1
    if verdict is None or verdict.validity.value != "pass":
        print(f"UNDECIDED: {clause} on {name}: this history no longer exercises or decides the clause")
        return 1
    print(f"FIXED: {clause} on {name} agrees with the reference on this counterexample")
    return 0


@guarded
def cmd_diff(args) -> int:
    old, new = loading.load_results(args.old), loading.load_results(args.new)
    result = diff.compare(old["rows"], new["rows"])
    print(diff.render(result))
    return 1 if result["regressions"] else 0


@guarded
def cmd_failures(args) -> int:
    print(dedupe.render(loading.load_results(args.results)["rows"]))
    return 0


@guarded
def cmd_expectations(args) -> int:
    from ktc.reports.files import write_atomically

    doc = loading.load_results(args.results)
    failing = sorted({r["implementation"] for r in doc["rows"] if r["verdict"] in diff.BAD})
    impl = args.impl or (failing[0] if len(failing) == 1 else None)
    if impl is None:
        raise usage_error(f"--impl is needed: failing implementations are {', '.join(failing) or 'none'}")
    out = writable_file(Path(args.out), "--out")
    old = expectations.load(out) if out.exists() else None
    text = expectations.update(doc["rows"], impl, old)
    write_atomically(Path(args.out), text)
    print(f"wrote {args.out}: {text.count('[[expect]]')} expected failures for {impl}")
    return 0


def load_gate_inputs(args) -> tuple:
    """Read --baseline and --expectations before the run, so a bad file fails fast (exit 2)."""
    try:
        baseline = loading.load_results(args.baseline)["rows"] if args.baseline else None
        files = [expectations.load(p, *known()) for p in args.expectations or ()]
    except loading.InputError as error:
        raise usage_error(str(error)) from None
    return baseline, files


def gate(args, report: Path, code: int, inputs: tuple) -> int:
    """The exit code of ``ktc run``: with a baseline or expectations, only new failures and
    unexpected passes fail it; pytest's own errors (usage, internal, no tests) still do."""
    baseline, files = inputs
    if baseline is None and not files or code not in (0, 1):
        return code
    try:
        doc = loading.load_results(report / "results.json")
    except loading.InputError as error:
        print(f"ktc: error: {error}", file=sys.stderr)
        return 1
    rows = doc["rows"]
    external = {t["implementation"] for t in doc.get("provenance", {}).get("targets", []) if t.get("external")}
    result = diff.gate(rows, baseline, expectations.index(files, rows, external))
    print(diff.render_gate(result))
    return 1 if result["new_failures"] or result["unexpected_passes"] else 0


COMMANDS = {
    "report": cmd_report,
    "replay": cmd_replay,
    "diff": cmd_diff,
    "failures": cmd_failures,
    "expectations": cmd_expectations,
}
