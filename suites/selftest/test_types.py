"""mypy finds no error in ktc: every package but those suites/selftest/typecheck.py's NOT_YET names with a
reason, strict on the core as pyproject.toml's [tool.mypy] says.  mypy runs in a subprocess from this venv with
its incremental cache in ktc's cache, so a run after the first reads only the files that changed."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import pytest

from ktc.suites.selftest import typecheck

pytestmark = pytest.mark.xdist_group("mypy")  # one mypy at a time on its incremental cache

CORE = ("ktc.specs", "ktc.reference", "ktc.strategies", "ktc.checks", "ktc.judge", "ktc.reports")


@pytest.fixture(scope="module", autouse=True)
def installed() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.fail("mypy is not installed: it is in the test extra (pip install -e '.[test]')")


def test_mypy_finds_no_error_in_the_checked_packages():
    code, report = typecheck.run()
    assert code == 0, f"mypy (python -m ktc.suites.selftest.typecheck):\n{report[-8000:]}"


def test_mypy_reads_ktc_by_its_installed_names_and_reports_the_clones_paths():
    """An error mypy must find through ``ktc.specs``: were the name not resolved, the call would be untyped."""
    program = "from ktc.specs.clauses import all_clauses\ncount: int = all_clauses()\n"
    code, report = typecheck.mypy(["-c", program])
    assert code == 1 and 'expression has type "dict[str, Clause]"' in report, report[-3000:]
    home = typecheck.tree()
    said = typecheck.readable(f"{home}/ktc/specs/clauses.py:9: error\n{home.name}/ktc/audit/facts.py:9: note", home)
    named = [Path(line.split(":")[0]).resolve() for line in said.splitlines()]
    assert named == [typecheck.ROOT / "specs" / "clauses.py", typecheck.ROOT / "ktc" / "audit" / "facts.py"], said


# --strict's flags that a per-module section can set (mypy's `strict` itself is global only)
STRICT = {
    "disallow_any_generics": True,
    "disallow_subclassing_any": True,
    "disallow_untyped_calls": True,
    "disallow_untyped_defs": True,
    "disallow_incomplete_defs": True,
    "check_untyped_defs": True,
    "disallow_untyped_decorators": True,
    "warn_return_any": True,
    "implicit_reexport": False,
    "strict_equality": True,
    "extra_checks": True,
}


def strict_modules() -> set[str]:
    config = tomllib.loads((typecheck.ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    strict = [o for o in config["overrides"] if all(o.get(flag) is value for flag, value in STRICT.items())]
    return {m.removesuffix(".*") for o in strict for m in o["module"]}


def test_the_core_is_strict_and_each_package_left_out_is_a_package_with_a_reason():
    assert set(CORE) <= strict_modules(), f"not strict in [tool.mypy]: {sorted(set(CORE) - strict_modules())}"
    packages = {f"ktc.{p.name}" for p in (typecheck.tree() / "ktc").iterdir() if (p / "__init__.py").is_file()}
    unknown = set(typecheck.NOT_YET) - packages
    assert not unknown and all(typecheck.NOT_YET.values()), f"not packages of ktc: {sorted(unknown)}"
