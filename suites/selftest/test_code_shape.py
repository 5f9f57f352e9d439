"""The shape of ktc's own code, measured: no import circle between its modules, small functions
(median <= 8 lines, p90 <= 15, docstrings not counted), no module over 400 lines, and ruff's lint clean.
ARCHITECTURE.md states these rules; this file is what keeps them true."""
import ast
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ktc", "specs", "reference", "strategies", "implementations", "reports", "examples", "suites",
            "mutation", "benchmarks")


def sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "latest" not in p.parts)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The project's modules ``path`` imports, lazy imports inside functions included."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = absolute(package, node.module, node.level)
            found |= {base} | {f"{base}.{a.name}" for a in node.names}
    return {m for m in found if m in known and m != module_name(path)}


def absolute(package: str, module: str | None, level: int) -> str:
    if not level:
        return module or ""
    parts = package.split(".")[: len(package.split(".")) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in sources()}
    known = set(paths)
    return {name: imported_modules(path, known) - parents(name) for name, path in paths.items()}


def parents(name: str) -> set[str]:
    """A module importing its own package's __init__ is not a circle worth reporting."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    found = []
    for start in sorted(graph):
        path = path_back(graph, start)
        if path:
            found.append(path)
    return found


def path_back(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """The shortest import path from ``start`` back to itself, if any (breadth first)."""
    frontier, came_from = [start], {}
    while frontier:
        node = frontier.pop(0)
        for target in sorted(graph.get(node, ())):
            if target == start:
                return walk_back(came_from, node, start)
            if target not in came_from:
                came_from[target] = node
                frontier.append(target)
    return None


def walk_back(came_from: dict[str, str], node: str, start: str) -> list[str]:
    path = [node]
    while path[-1] != start:
        path.append(came_from[path[-1]])
    return [start] + path[::-1][1:] + [start]


def test_no_two_modules_import_each_other_in_a_circle():
    found = circles(import_graph())
    assert not found, f"{len(found)} modules sit on an import circle, e.g. " + " -> ".join(found[0])


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


def test_functions_are_small_median_at_most_8_lines_and_p90_at_most_15():
    sizes = function_sizes()
    median, p90 = statistics.median(sizes), sizes[int(0.9 * len(sizes))]
    print(f"{len(sizes)} functions: median {median} lines, p90 {p90}, max {sizes[-1]}")
    assert median <= 8 and p90 <= 15, f"median {median}, p90 {p90} over {len(sizes)} functions"


def test_no_module_is_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in sources() if (n := len(p.read_text().splitlines())) > 400}
    assert not long, f"modules over 400 lines: {long}"


def ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if not found:
        pytest.fail("ruff is not installed: it is in the test extra (pip install -e '.[test]')")
    return found


def test_ruff_finds_nothing():
    """The lint rules of pyproject.toml's [tool.ruff.lint] (why there is no formatter: a comment there)."""
    done = subprocess.run([ruff(), "check", "--quiet", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, f"ruff check:\n{done.stdout[-3000:]}{done.stderr[-1000:]}"
