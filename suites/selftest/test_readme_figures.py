"""README.md states only figures the code agrees with, and stays a short guide.

Each figure is read out of the README's text by the phrase it follows and compared with the code
that defines it: the clause count and per-KIP counts (specs/clauses.py), the profiles
(specs/profiles.py), the default Kafka releases (provision.DEFAULT_VERSIONS and how ``kafka-3.9`` /
``kafka-4`` resolve) and the releases ``./run`` judges, the mutants of the kill table, the built-in
names, and every flag of every ``ktc`` command line it shows.  A stale figure fails with which
figure it is and the README line that states it.  Stating a number here means adding its check.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

import pytest

from ktc import implementations
from ktc.cli.commands import build_parser
from ktc.kafka.processes import provision
from ktc.specs.clauses import all_clauses
from ktc.specs.profiles import names as profile_names
from ktc.suites.selftest.mutants import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]
RUN_SCRIPT = ROOT / "run"
TEXT = (ROOT / "README.md").read_text()
MAX_LINES = 260  # a guide a newcomer reads; measurements go to benchmarks/README.md


def stated(pattern: str, what: str) -> re.Match:
    """The one place the README states ``what``; failing when it no longer does, or says it twice."""
    found = list(re.finditer(pattern, TEXT))
    assert found, f"README.md no longer states {what} (looked for /{pattern}/): update the README or this test"
    assert len(found) == 1, f"README.md states {what} {len(found)} times (lines {[line(m) for m in found]}): once"
    return found[0]


def line(match: re.Match) -> int:
    return TEXT.count("\n", 0, match.start()) + 1


def where(match: re.Match, what: str) -> str:
    said = " ".join(match.group(0).split())
    return f"README.md line {line(match)} states {what} as {said[:160]!r}"


def test_the_readme_is_short():
    count = len(TEXT.splitlines())
    assert count <= MAX_LINES, f"README.md has {count} lines, over {MAX_LINES}: move detail to the docs it links"


def test_the_clause_count_and_the_count_per_kip_are_the_registrys():
    found = stated(r"\*\*(\d+) clauses\*\* in `specs/kip-\*\.toml` \(((?:KIP-\d+ \d+(?:, )?)+)\)", "the clause count")
    clauses = all_clauses()
    assert int(found.group(1)) == len(clauses), where(found, "the clause count") + f"; specs has {len(clauses)}"
    per_kip = {kip: int(n) for kip, n in re.findall(r"(KIP-\d+) (\d+)", found.group(2))}
    actual = dict(Counter(c.kip for c in clauses.values()))
    assert per_kip == actual, where(found, "the clauses per KIP") + f"; specs has {actual}"


def test_the_profiles_are_the_ones_specs_defines():
    found = stated(r"\*\*(\d+) profiles\*\*([^\n]*\n(?:  [^\n]*\n)*)", "the profiles")
    defined = profile_names()
    assert int(found.group(1)) == len(defined), (
        f"README.md line {line(found)} states **{found.group(1)} profiles**; specs/profiles.toml has {len(defined)}"
    )
    listed = re.findall(r"`(kip|kafka-[\d.]+)`", found.group(2))
    assert sorted(listed) == sorted(defined), (
        f"README.md line {line(found)} names the profiles {listed}; specs/profiles.toml defines {list(defined)}"
    )


def default_releases() -> tuple[re.Match, tuple[str, ...]]:
    found = stated(
        r"newest 3\.9\.x and 4\.x that Maven Central\s+lists \([^)]*the last known releases: "
        r"\*\*(\d+\.\d+\.\d+) and (\d+\.\d+\.\d+)\*\*\)",
        "the default Kafka releases",
    )
    return found, found.groups()


def test_the_default_kafka_releases_are_the_last_known_ones():
    found, releases = default_releases()
    assert releases == provision.DEFAULT_VERSIONS, (
        where(found, "the default Kafka releases") + f"; provision.DEFAULT_VERSIONS is {provision.DEFAULT_VERSIONS}"
    )


def test_kafka_3_9_and_kafka_4_are_the_newest_of_their_lines_else_the_stated_releases(monkeypatch):
    found, (old, new) = default_releases()
    monkeypatch.setattr(provision, "known_releases", lambda *a, **k: ([], "offline"))
    offline = (implementations.load("kafka-3.9").version, implementations.load("kafka-4").version)
    assert offline == (old, new), where(found, "the releases used offline") + f"; the built-ins resolve to {offline}"
    listed = ["3.8.1", old, "3.9.9", new, "4.9.1", "5.0.0"]
    monkeypatch.setattr(provision, "known_releases", lambda *a, **k: (listed, "a list"))
    online = (implementations.load("kafka-3.9").version, implementations.load("kafka-4").version)
    assert online == ("3.9.9", "4.9.1"), f"kafka-3.9 / kafka-4 resolve to {online}, not the newest 3.9.x and 4.x"


def test_the_releases_run_judges_are_the_ones_the_readme_names():
    found = stated(r"from\s+Maven Central, `(--impl kafka-[^`]+)`", "the Kafka releases ./run judges")
    script = (ROOT / "run").read_text()
    passed = re.search(r'command -v mvn[^\n]*\n?[^\n]*impls="\$impls ([^"]+)"', script)
    assert passed, "./run no longer adds Kafka releases after checking for mvn: update this test"
    assert found.group(1) == passed.group(1), (
        where(found, "the releases ./run judges") + f"; ./run passes {passed.group(1)!r}"
    )


def test_the_kill_table_has_the_mutants_the_readme_counts():
    found = stated(r"kill table of (\d+) mutants", "the mutants of the kill table")
    assert int(found.group(1)) == len(CATALOGUE), (
        where(found, "the kill table") + f"; suites/selftest/mutants.py has {len(CATALOGUE)}"
    )


def test_the_built_in_names_are_the_registrys():
    found = stated(r"Built-ins\s+go by name: ([^;]+);", "the built-in implementations")
    listed = set(re.findall(r"`([\w.-]+)`", found.group(1)))
    assert listed == set(implementations.builtins()) | {"kafka-X.Y.Z"}, (
        where(found, "the built-ins")
        + f"; implementations.builtins() is {sorted(implementations.builtins())} (and kafka-X.Y.Z)"
    )


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def test_the_default_profile_choice_is_the_one_ktc_run_has():
    found = stated(r"By default \(`--profile ([\w-]+)`\)", "ktc run's default --profile")
    default = subcommands()["run"].get_default("profile")
    assert found.group(1) == default, where(found, "the default --profile") + f"; ktc run's default is {default!r}"


def test_every_flag_named_alone_is_an_option_of_a_ktc_command():
    known = set().union(*map(options, subcommands().values()))
    named = [
        (line_no, flag)
        for line_no, text in enumerate(TEXT.splitlines(), 1)
        for flag in re.findall(r"`(--[a-z][\w-]*)[^`]*`", text)
    ]
    unknown = [(line_no, flag) for line_no, flag in named if flag not in known]
    assert named and not unknown, f"README.md (line, flag) that no ktc command has: {unknown}"


def test_the_mutation_tool_has_the_flags_shown():
    from mutation.__main__ import build_parser as mutation_parser

    found = stated(r"`python -m mutation ([^`]*)`", "the mutation tool's command line")
    unknown = [f for f in re.findall(r"--[a-z][\w-]*", found.group(1)) if f not in options(mutation_parser())]
    assert not unknown, where(found, "python -m mutation") + f"; it has no {unknown}"


def command_lines() -> list[tuple[int, str]]:
    """Every ``ktc ...`` (and ``./run conformance ...``) the README shows, in code blocks or inline code."""
    found, shell = [], False
    for number, text in enumerate(TEXT.splitlines(), 1):
        shell = text == "```sh" or shell and not text.startswith("```")
        whole = shell and text.startswith(("ktc ", "./run "))
        spans = [text] if whole else re.findall(r"`((?:ktc|\./run) [^`]+)`", text)
        found += [(number, span.split(" #")[0].split(" -- ")[0]) for span in spans]
    return found


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """'run', 'expectations update', ... -> its parser."""
    found = {}
    for action in build_parser()._subparsers._group_actions:
        for name, sub in action.choices.items():
            found[name] = sub
            nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
            found.update({f"{name} {n}": p for a in nested for n, p in a.choices.items()})
    return found


@pytest.mark.parametrize("number, command", command_lines(), ids=lambda value: str(value)[:60])
def test_every_command_line_shown_uses_flags_that_exist(number, command):
    if command.split()[:2] in (["./run", "tests"], ["./run", "setup"]):
        assert f"  {command.split()[1]})" in RUN_SCRIPT.read_text(), f"README.md line {number}: no {command!r} in ./run"
        return  # ./run tests takes pytest's options, ./run setup none
    words = command.replace("./run conformance", "ktc run").split()
    parsers = subcommands()
    name = " ".join(words[1:3]) if " ".join(words[1:3]) in parsers else words[1] if len(words) > 1 else ""
    if not name:
        return  # `ktc` alone
    assert name in parsers, f"README.md line {number}: 'ktc {name}' is not a ktc command ({sorted(parsers)})"
    known = options(parsers[name])
    flags = re.findall(r"(?<![\w-])(--[a-z][\w-]*)", command)
    unknown = [flag for flag in flags if flag not in known]
    assert not unknown, f"README.md line {number}: 'ktc {name}' has no {unknown} (it has {sorted(known)})"


def test_the_readme_shows_command_lines_for_this_test_to_check():
    assert len(command_lines()) >= 20, command_lines()
