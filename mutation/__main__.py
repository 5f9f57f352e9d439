"""``python -m mutation [--max N] [--workers N] [--seed S] [--timeout S] [--out DIR]
                       [--resume [--retry-survivors] | --shrink N]``

Bad input prints one line and exits 2; Ctrl-C stops every worker and forked child and exits 130,
with every mutant decided so far in ``DIR/outcomes.jsonl`` (``--resume`` goes on from there).
Exit 0 when the run finished (the score is in the report, not in the exit code).
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

from . import journal, report, shrinking, snapshot
from .mutants import Unmutated, enumerate_mutants, sample
from .runner import run_all
from .subject import ROOT, copy_into

EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        print(f"mutation: error: {message} (see 'python -m mutation --help')", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def build_parser() -> Parser:
    parser = Parser(prog="python -m mutation", description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--max", type=positive, help="run at most N mutants (a stable sample by --seed)")
    parser.add_argument("--workers", type=positive, default=2, help="parallel workers (default 2)")
    parser.add_argument("--seed", type=int, default=20261123, help="Hypothesis seed and sampling seed")
    parser.add_argument(
        "--timeout",
        type=positive,
        help="CPU seconds per mutant and phase before it counts as killed "
        "(default: three times the unmutated run's, at least 60)",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="KEY",
        help="run just this mutant (repeatable; keys as "
        "the report prints them, e.g. reference/int64.py:core/NumberReplacer:0)",
    )
    parser.add_argument("--out", default=str(ROOT / "mutation" / "latest"), help="report directory")
    parser.add_argument(
        "--shrink",
        type=positive,
        metavar="N",
        help="instead of killing: for N killed mutants of "
        "DIR/outcomes.jsonl, time the killing test's shrinking and size its counterexample",
    )
    parser.add_argument(
        "--retry-survivors",
        action="store_true",
        help="with --resume: run the journal's survivors "
        "(and errors) again, on the tree as it is now, except reviewed equivalents; kills stand",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="go on from DIR/outcomes.jsonl (same --seed): only mutants it does not hold are run",
    )
    return parser


def progress(outcome, done: int, total: int) -> None:
    where = f" by {outcome.test}" if outcome.test else ""
    print(
        f"[{done}/{total}] {outcome.status:8} {outcome.seconds:6.1f}s ({outcome.cpu:.1f}s CPU) {outcome.key}{where}",
        flush=True,
    )


def baseline_timeout(path: str, seed: int) -> int:
    """Run the unmutated copy (it must pass every suite); the timeout is three times its CPU seconds, at least
    60.  CPU, not wall clock: on a loaded machine a mutant that merely waits for a core is not looping."""
    outcome = run_all([Unmutated(path)], 1, seed, 3600, progress)[0]
    if outcome.status != "survived":
        print(
            f"mutation: error: the unmutated copy does not pass the suites ({outcome.status}: {outcome.test}); "
            f"fix the suites or the copy first",
            file=sys.stderr,
        )
        sys.exit(EXIT_USAGE)
    return max(60, round(3 * outcome.cpu))


def chosen(mutants: list, args) -> list:
    """--only's mutants (an unknown key is bad input), else a --max sample, else all."""
    if not args.only:
        return sample(mutants, args.max, args.seed)
    by_key = {m.key: m for m in mutants}
    unknown = [k for k in args.only if k not in by_key]
    if unknown:
        print(
            f"mutation: error: no mutant {unknown[0]!r} (keys are module:operator:occurrence, as mutation.md "
            f"prints them)",
            file=sys.stderr,
        )
        sys.exit(EXIT_USAGE)
    return [by_key[k] for k in args.only]


def interrupted(*_) -> None:
    raise KeyboardInterrupt  # SIGTERM stops the run as Ctrl-C does: workers and children go with it


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.retry_survivors and not args.resume:
        parser.error("--retry-survivors goes with --resume")
    signal.signal(signal.SIGTERM, interrupted)
    if not snapshot.inside():
        return snapshot.run_in_copy(sys.argv[1:] if argv is None else argv, Path(args.out).resolve())
    started, out = time.monotonic(), Path(args.out)
    with tempfile.TemporaryDirectory(prefix="ktc-mutants-") as listing:
        copies = copy_into(Path(listing))
        every = enumerate_mutants(copies)
        mutants = chosen(every, args)
        if args.shrink:
            return shrink(mutants, args, argv)
        try:
            path, timeout, done = opened(out, args, str(copies[0]))
            done = among(done, mutants)
            decided = {o.key for o in done}
            todo = [m for m in mutants if m.key not in decided]
            print(
                f"mutation: {len(todo)} mutants to run ({len(done)} from the journal), {args.workers} workers, "
                f"seed {args.seed}, timeout {timeout} CPU s",
                flush=True,
            )
            outcomes = done + run_all(todo, args.workers, args.seed, timeout, journaled(path))
        except journal.JournalError as error:
            print(f"mutation: error: {error}", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second signal must not cut the report short
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            partial_report(out, mutants, args, argv, time.monotonic() - started)
            print(
                f"mutation: interrupted; what was decided is in {out / journal.NAME} and a partial report in "
                f"{out / 'mutation.md'} (go on with --resume)",
                file=sys.stderr,
            )
            return 130
        if args.resume:
            mutants, outcomes = whole_journal(out, args.seed, every)
        command = snapshot.command(argv)
        facts = report.write(out, mutants, outcomes, report.reviewed_equivalents(), time.monotonic() - started, command)
    print(
        f"mutation: score {facts['score']} ({facts['killed']} killed, {facts['survived']} survived, "
        f"{facts['equivalent']} equivalent) in {facts['wall_s']} s; report in {args.out}/mutation.md"
    )
    return 0


def among(outcomes: list, mutants: list) -> list:
    """The outcomes of the mutants this run chose (a journal may hold others: --only, --max)."""
    keys = {m.key for m in mutants}
    return [o for o in outcomes if o.key in keys]


def whole_journal(out: Path, seed: int, every: list) -> tuple[list, list]:
    """With --resume the report covers every mutant the journal holds, not only this run's --only or
    --max choice (a targeted retry once overwrote a 980-mutant report with a 3-mutant one)."""
    decided = journal.resume(out, seed)[2]
    keys = {o.key for o in decided}
    held = [m for m in every if m.key in keys]
    return held, among(decided, held)


def partial_report(out: Path, mutants: list, args, argv, wall_s: float) -> None:
    """The report over what the journal holds, its command marked as interrupted (nothing when no journal)."""
    try:
        decided = journal.resume(out, args.seed)[2]
    except journal.JournalError:
        return
    decided = among(decided, mutants)
    command = f"{snapshot.command(argv)}  (interrupted: {len(decided)} of {len(mutants)} mutants decided)"
    report.write(out, mutants, decided, report.reviewed_equivalents(), wall_s, command)


def shrink(mutants: list, args, argv) -> int:
    """--shrink N: time shrinking on N killed mutants of the journal; shrinking.md next to mutation.md."""
    out = Path(args.out)
    try:
        _path, timeout, done = journal.resume(out, args.seed)
    except journal.JournalError as error:
        print(f"mutation: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    jobs = shrinking.chosen(mutants, done, args.shrink, args.seed)
    print(f"mutation: timing the shrinking of {len(jobs)} killed mutants, {args.workers} workers", flush=True)
    try:
        rows = run_all(jobs, args.workers, args.seed, timeout, shrink_progress, task=shrinking.measure)
    except KeyboardInterrupt:
        print("mutation: interrupted", file=sys.stderr)
        return 130
    facts = shrinking.write(out, rows, snapshot.command(argv))
    print(
        f"mutation: median shrink {facts['median_shrink_s']} s (max {facts['max_shrink_s']}), median "
        f"counterexample {facts['median_ops']} ops after CreateTopic; report in {out}/shrinking.md"
    )
    return 0


def shrink_progress(row, done: int, total: int) -> None:
    print(
        f"[{done}/{total}] {row.status:12} shrink {row.shrink_s}s, {row.ops} ops  {row.key} by {row.test}", flush=True
    )


def opened(out: Path, args, copy: str) -> tuple[Path, int, list]:
    """The journal to append to, the timeout, and the outcomes already decided (only with --resume)."""
    if args.resume:
        path, timeout, done = journal.resume(out, args.seed)
        reviewed = report.reviewed_equivalents()  # a reviewed equivalent cannot be killed: not retried
        retried = [
            o for o in done if args.retry_survivors and o.status in ("survived", "error") and o.key not in reviewed
        ]
        return path, timeout, [o for o in done if o not in retried]
    timeout = args.timeout or baseline_timeout(copy, args.seed)
    return journal.start(out, args.seed, timeout), timeout, []


def journaled(path: Path):
    def record(outcome, done: int, total: int) -> None:
        journal.append(path, outcome)
        progress(outcome, done, total)

    return record


if __name__ == "__main__":
    sys.exit(main())
