"""ARCHITECTURE.md's import rules, enforced: an implementation under test never imports the
reference's rule logic (only reference.types), and nothing outside implementations/ imports
pyspark or Kafka clients -- except ``ktc audit`` (ktc/audit/, ktc/cli/audit_run.py), which judges a
real topic's stored data with Spark."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALLOWED_FROM_REFERENCE = {"reference.types"}


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return found


IMPLEMENTATION_FILES = [p for p in (ROOT / "implementations").rglob("*.py") if p.name != "reference.py"]


@pytest.mark.parametrize("path", IMPLEMENTATION_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_implementation_never_imports_reference_rules(path):
    bad = {m for m in imports(path) if m.split(".")[0] == "reference"
           and m not in ALLOWED_FROM_REFERENCE and not m.startswith("reference.types.")}
    assert not bad, f"{path.name} imports reference rule logic: {sorted(bad)}"


SPARK_USERS = {"implementations", "ktc/audit", "ktc/cli/audit_run.py"}


def test_only_implementations_and_the_audit_import_pyspark():
    for package in ("ktc", "specs", "reference", "strategies", "reports"):
        for path in (ROOT / package).rglob("*.py"):
            where = str(path.relative_to(ROOT))
            if any(where.startswith(allowed) for allowed in SPARK_USERS):
                continue
            assert not {m for m in imports(path) if m.split(".")[0] == "pyspark"}, f"{where} imports pyspark"


@pytest.mark.parametrize("package", ["specs", "reference", "strategies", "reports"])
def test_lower_layers_do_not_import_upper_layers(package):
    upper = {"ktc", "suites", "implementations"}
    for path in (ROOT / package).rglob("*.py"):
        bad = {m for m in imports(path) if m.split(".")[0] in upper}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_strategies_import_only_plain_types_from_the_reference():
    for path in (ROOT / "strategies").rglob("*.py"):
        bad = {m for m in imports(path) if m.split(".")[0] == "reference" and not m.startswith("reference.types")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


KAFKA = ROOT / "implementations" / "kafka"
# implementations/kafka's folders: the client knows nothing of histories or processes; the processes
# know the client (to ask a broker if it is up) but nothing of judging.
KAFKA_FORBIDDEN = {"client": {"judge", "processes", "adapter", "cluster_adapter", "container"},
                   "processes": {"judge", "adapter", "cluster_adapter", "container"}}


def relative_imports(path: Path) -> set[str]:
    """Sibling folders/modules of implementations/kafka that ``path`` imports (relative or absolute)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.level == 2:
                found.add(node.module.split(".")[0])
            elif node.module.startswith("implementations.kafka."):
                found.add(node.module.split(".")[2])
    return found


@pytest.mark.parametrize("folder", sorted(KAFKA_FORBIDDEN))
def test_kafka_folders_import_only_downwards(folder):
    for path in (KAFKA / folder).rglob("*.py"):
        bad = relative_imports(path) & KAFKA_FORBIDDEN[folder]
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_no_import_circle_between_kafka_modules():
    graph = {p: {q for q in local_targets(p)} for p in KAFKA.rglob("*.py")}
    for start in graph:
        seen, stack = set(), list(graph[start])
        while stack:
            node = stack.pop()
            assert node != start, f"import circle through {start.relative_to(ROOT)}"
            if node not in seen:
                seen.add(node)
                stack.extend(graph.get(node, ()))


def local_targets(path: Path) -> set[Path]:
    """The implementations/kafka modules ``path`` imports (lazy imports inside functions included)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            target = base.joinpath(*node.module.split("."))
            out |= {p for p in (target.with_suffix(".py"), target / "__init__.py") if p.exists()}
    return out
