"""ARCHITECTURE.md's layer table, checked: the contracts of pyproject.toml's [tool.importlinter], run by
import-linter over the tree laid out as it is installed (``ktc.specs`` from ``specs/``, ... and ``mutation/``
beside ``ktc``), every import read, those inside functions too.  Each break the table once had is put back in
that copy, one at a time, and its contract must report it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"
LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"

# Each break, put back as one module-level import: (the package that gains it, what it imports, the contract
# that must report it).  The packages' own __init__ files take the line, so files moving inside them change
# nothing here.
BREAKS = {
    "an implementation imports the judge": ("ktc.implementations.kafka", "ktc.judge", "layers"),
    "ktc audit imports the broker processes": ("ktc.audit", "ktc.kafka.processes", "audit-starts-nothing"),
    "ktc hunt imports the cli": ("ktc.hunt", "ktc.cli", "layers"),
    "the checks import the judge": ("ktc.checks", "ktc.judge", "the-checks-below-the-judge"),
}
# An import inside a function is an import: the core reaching a family lazily breaks its contract too.
LAZY = ("ktc.plugin", "ktc.implementations.kafka", "no-family-in-the-core")


def installed_layout(dest: Path) -> Path:
    """The Python files of the clone where the wheel puts them (pyproject's package-dir), and ``mutation/``
    beside them: import-linter finds a package's modules in its folder, and ``ktc.specs`` is not in ``ktc/``."""
    folders = tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]["package-dir"]
    pairs = [(ROOT / folder, dest.joinpath(*name.split("."))) for name, folder in folders.items()]
    for source, target in [*pairs, (ROOT / "mutation", dest / "mutation")]:
        for path in source.rglob("*.py"):
            if not {"__pycache__", "latest"} & set(path.relative_to(source).parts):
                (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target / path.relative_to(source))
    return dest


def lint(tree: Path, *contracts: str) -> subprocess.CompletedProcess:
    """import-linter on ``tree`` with the clone's contracts (or only ``contracts``), from the tree's folder
    (its ``ktc`` first on sys.path, before the editable install's)."""
    only = [arg for contract in contracts for arg in ("--contract", contract)]
    argv = [sys.executable, "-c", LINT, str(PYPROJECT), "--no-cache", "--no-logo", *only]
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}  # one line per contract and per import
    return subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=300)


def broken(done: subprocess.CompletedProcess) -> list[str]:
    """The contracts the run reports broken, by name."""
    return re.findall(r"^(.+) BROKEN\b", done.stdout, re.M)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return installed_layout(tmp_path_factory.mktemp("installed"))


def with_import(tree: Path, package: str, statement: str, *contracts: str) -> subprocess.CompletedProcess:
    """``contracts`` checked on ``tree`` with ``statement`` appended to ``package``'s __init__ (put back after)."""
    init = tree.joinpath(*package.split("."), "__init__.py")
    kept = init.read_text()
    init.write_text(f"{kept}\n{statement}\n")
    try:
        return lint(tree, *contracts)
    finally:
        init.write_text(kept)


def test_the_tree_keeps_every_contract(tree):
    done = lint(tree)
    code, out = done.returncode, done.stdout
    report = out[out.find("Broken contracts") :] if broken(done) else out + done.stderr
    assert code == 0, f"contracts broken: {broken(done)}\n{report[-6000:]}"
    assert re.search(r"Contracts: \d+ kept, 0 broken", out), out[-2000:]


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_a_break_put_back_breaks_its_contract(tree, name):
    package, imported, contract = BREAKS[name]
    done = with_import(tree, package, f"import {imported}  # the break, put back", contract)
    code, out = done.returncode, done.stdout
    assert code == 1 and broken(done), f"{contract} kept {name}:\n{out[-3000:]}{done.stderr}"
    assert f"{package} -> {imported}" in out, f"{contract} broke, not on {name}:\n{out[-3000:]}"


def test_an_import_inside_a_function_breaks_a_contract_too(tree):
    package, imported, contract = LAZY
    done = with_import(tree, package, f"def lazily():\n    import {imported}", contract)
    code, out = done.returncode, done.stdout
    assert code == 1 and f"{package} -> {imported}" in out, f"{contract} missed a lazy import:\n{out[-3000:]}"
