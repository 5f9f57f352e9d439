"""What ktc knows, listed: ``ktc clauses`` (the clause registry, the tests citing each clause; ``--check`` fails
on gaps, and CI runs it), ``ktc profiles`` (the profiles and their switches), ``ktc env`` (every environment
variable ktc reads)."""

from __future__ import annotations

import sys

from ktc.paths import suites_dir


def add_parsers(sub) -> None:
    clauses = sub.add_parser("clauses", help="list clauses; --check fails on registry gaps")
    clauses.add_argument("--check", action="store_true")
    sub.add_parser("profiles", help="list profiles and their switches")
    sub.add_parser("env", help="list every environment variable ktc reads, what it means, and those set here")


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


COMMANDS = {"clauses": cmd_clauses, "profiles": cmd_profiles, "env": cmd_env}
