"""The shape of ktc's own code, measured on the formatter's layout: small functions (median <= 8 lines,
p90 <= 16, docstrings not counted), no module over 400 lines, ruff's lint clean and ruff's format unchanged.
ARCHITECTURE.md states these rules; this file is what keeps them true (no import circle: the contracts of
pyproject.toml's [tool.importlinter], test_contracts.py)."""

import ast
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "ktc",
    "specs",
    "reference",
    "strategies",
    "implementations",
    "reports",
    "examples",
    "suites",
    "mutation",
    "benchmarks",
)


def sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "latest" not in p.parts)


def function_sizes() -> list[int]:
    sizes = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sizes.append(node.end_lineno - node.lineno + 1 - docstring_lines(node))
    return sorted(sizes)


def docstring_lines(node) -> int:
    first = node.body[0]
    is_doc = (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    )
    return first.end_lineno - first.lineno + 1 if is_doc else 0


def test_functions_are_small_median_at_most_8_lines_and_p90_at_most_16():
    sizes = function_sizes()
    median, p90 = statistics.median(sizes), sizes[int(0.9 * len(sizes))]
    print(f"{len(sizes)} functions: median {median} lines, p90 {p90}, max {sizes[-1]}")
    assert median <= 8 and p90 <= 16, f"median {median}, p90 {p90} over {len(sizes)} functions"


def test_no_module_is_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in sources() if (n := len(p.read_text().splitlines())) > 400}
    assert not long, f"modules over 400 lines: {long}"


def ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if not found:
        pytest.fail("ruff is not installed: it is in the test extra (pip install -e '.[test]')")
    return found


def test_ruff_finds_nothing():
    """The lint rules of pyproject.toml's [tool.ruff.lint]."""
    done = subprocess.run([ruff(), "check", "--quiet", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, f"ruff check:\n{done.stdout[-3000:]}{done.stderr[-1000:]}"


def test_the_code_is_as_the_formatter_lays_it_out():
    """The size limits above measure formatted code: ``ruff format`` would change no file."""
    done = subprocess.run([ruff(), "format", "--check", "--quiet", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, (
        f"ruff format --check (run: ruff format .):\n{done.stdout[-3000:]}{done.stderr[-1000:]}"
    )
