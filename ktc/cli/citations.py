"""Which tests cite which clauses, read statically from the suites (no test is imported)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path


def _clause_args(node: ast.AST) -> list[str]:
    """String arguments of ``*.mark.clause(...)`` calls inside ``node``."""
    out = []
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "clause":
            out += [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return out


def _tests(tree: ast.Module) -> list[ast.AST]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.lower().startswith("test"):
            found.append(node)
    return found


def citations(suites: Path) -> Counter:
    """clause id -> number of test functions/classes citing it (module-level pytestmark included)."""
    counts: Counter = Counter()
    for path in sorted(suites.rglob("test_*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        module_level = [
            c
            for stmt in tree.body
            if isinstance(stmt, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in stmt.targets)
            for c in _clause_args(stmt)
        ]
        for test in _tests(tree):
            decorators = [c for d in getattr(test, "decorator_list", []) for c in _clause_args(d)]
            for clause_id in set(decorators + module_level):
                counts[clause_id] += 1
    return counts
