"""Every environment variable ktc reads is in one table, ktc/environment.py, which ``ktc env`` prints and
``ktc --help`` points to; and every row of it is a variable the code reads.

Read means: ``os.environ.get("X")``, ``os.environ["X"]``, ``os.getenv("X")``, ``"X" in os.environ`` (and the same
on any mapping named ``environ``), an option's ``env="X"`` default, and any ``KTC_*`` name that appears in code
or in the documents beside it (the C preload reads ``KTC_CLOCK_FILE`` with getenv; a README tells a user to set
one).  A few ``KTC_`` names are not variables; they are listed below with what they are.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from ktc import environment, implementations

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("ktc", "implementations", "reports", "specs", "reference", "strategies", "examples")
EVERYWHERE = (*PRODUCT, "suites", "mutation", "benchmarks")
NOT_VARIABLES = {
    "KTC_KFAKE_LISTENING": "the line kfake's Go launcher prints once it listens (processes/kfake_go/main.go)",
    "KTC_DETAILS": "the JavaScript global of the HTML report's details file (reports/html.py)",
    "KTC_OPTIONS": "a tuple of the pytest plugin's own option names (ktc/plugin/__init__.py)",
    "KTC_MODULES": "a set of ktc's package names in suites/selftest/test_hunt.py",
}
NAMED = re.compile(r"\bKTC_[A-Z0-9_]*[A-Z0-9]\b")


def files(folders, suffixes) -> list[Path]:
    return sorted(
        p
        for folder in folders
        for p in (ROOT / folder).rglob("*")
        if p.suffix in suffixes and p.is_file() and "latest" not in p.parts
    )


def environ_reads(tree: ast.AST) -> set[str]:
    """The literal names a module reads from the environment."""
    return {name for node in ast.walk(tree) for name in literal(read_key(node))}


def read_key(node):
    """The key a node reads from an environment, or None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        owner = ast.unparse(node.func.value)
        return node.args[0] if node.func.attr in ("get", "getenv") and ("environ" in owner or owner == "os") else None
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return node.slice if "environ" in ast.unparse(node.value) else None
    if isinstance(node, ast.Compare) and any(isinstance(op, ast.In) for op in node.ops):
        return node.left if any("environ" in ast.unparse(c) for c in node.comparators) else None
    return None


def literal(node) -> set[str]:
    return {node.value} if isinstance(node, ast.Constant) and isinstance(node.value, str) else set()


def read_by_the_product() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in files(PRODUCT, {".py"}):
        for name in environ_reads(ast.parse(path.read_text())):
            found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    for option in implementations.options():
        if option.env:
            found.setdefault(option.env, []).append(f"the option {option.flag}")
    return found


def named_anywhere() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in [
        *files(EVERYWHERE, {".py", ".c", ".go", ".md", ".toml"}),
        ROOT / "run",
        ROOT / "README.md",
        ROOT / "ARCHITECTURE.md",
        ROOT / "conftest.py",
    ]:
        for name in set(NAMED.findall(path.read_text(errors="replace"))):
            found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def test_every_variable_the_product_reads_is_in_the_table():
    missing = {name: where for name, where in read_by_the_product().items() if name not in environment.by_name()}
    assert not missing, f"read but not in ktc/environment.py: {missing}"


def test_every_ktc_name_in_the_code_and_documents_is_in_the_table_or_is_not_a_variable():
    missing = {
        name: where[:3]
        for name, where in named_anywhere().items()
        if name not in environment.by_name() and name not in NOT_VARIABLES
    }
    assert not missing, f"named but not in ktc/environment.py: {missing}"


def test_every_row_is_a_variable_the_code_reads_or_names():
    known = set(read_by_the_product()) | set(named_anywhere())
    stale = [v.name for v in environment.VARIABLES if v.name not in known]
    assert not stale, f"rows no code reads: {stale}"
    assert not set(NOT_VARIABLES) & set(environment.by_name())


def test_the_scan_sees_each_way_of_reading():
    """The reader above is itself checked: each form it claims to see, it sees."""
    code = (
        "import os\nos.environ.get('A'); os.environ['B']; os.getenv('C'); 'D' in os.environ\n"
        "def f(environ): return environ.get('E')\nos.environ['F'] = '1'\n"
    )
    assert environ_reads(ast.parse(code)) == {"A", "B", "C", "D", "E"}


def test_each_row_has_a_kind_and_a_meaning_and_each_name_is_listed_once():
    assert all(v.kind in environment.KINDS and v.meaning for v in environment.VARIABLES)
    assert len(environment.by_name()) == len(environment.VARIABLES)


def test_ktc_help_points_to_ktc_env_which_lists_every_row_and_what_is_set():
    run = lambda *args: subprocess.run(
        [sys.executable, "-m", "ktc", *args],
        capture_output=True,
        text=True,  # noqa: E731
        cwd=ROOT,
        env={"KTC_KFAKE_VERSION": "newest", "PATH": "/usr/bin:/bin"},
    )
    helped, listed = run("--help"), run("env")
    assert helped.returncode == listed.returncode == 0, helped.stderr + listed.stderr
    assert "ktc env" in helped.stdout
    rows = {line.split()[0]: line for line in listed.stdout.splitlines() if line.startswith("  ")}
    assert set(rows) == set(environment.by_name()), set(rows) ^ set(environment.by_name())
    assert rows["KTC_KFAKE_VERSION"].endswith("[set: newest]") and "[set:" not in rows["KTC_CACHE"]
