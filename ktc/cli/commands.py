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

This module holds the parser and ``main``; each subcommand lives with its kind: ``catalog`` (clauses, profiles,
env), ``run_command`` (run), ``reports``, ``impl``, ``matrix``, ``audit``, the hunt and the families' own.
"""

from __future__ import annotations

import argparse
import sys

from ktc.cli import audit as cli_audit
from ktc.cli import catalog, run_command
from ktc.cli import impl as cli_impl
from ktc.cli import matrix as cli_matrix
from ktc.cli import reports as cli_reports
from ktc.cli.common import EXIT_USAGE, Parser, UsageError
from ktc.hunt import command as cli_hunt


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
    catalog.add_parsers(sub)
    run = run_command.add_parser(sub)
    add_family_commands(sub)
    cli_reports.add_parsers(sub, run)
    cli_impl.add_parsers(sub)
    cli_matrix.add_parser(sub)
    cli_audit.add_parser(sub)
    cli_hunt.add_parser(sub)
    return parser


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


COMMANDS = {
    **catalog.COMMANDS,
    **run_command.COMMANDS,
    **cli_reports.COMMANDS,
    **cli_impl.COMMANDS,
    **cli_matrix.COMMANDS,
    **cli_audit.COMMANDS,
    **cli_hunt.COMMANDS,
}

if __name__ == "__main__":
    sys.exit(main())
