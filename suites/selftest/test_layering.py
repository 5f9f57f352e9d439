"""ARCHITECTURE.md's import rules, enforced: an implementation under test never imports the
reference's rule logic (only reference.types), and nothing outside implementations/ imports
pyspark or Kafka clients -- except ktc's Spark toolkit (ktc/spark/) and ``ktc audit`` (ktc/audit/,
ktc/cli/audit_run.py), which judges a real topic's stored data with Spark; and ktc's generic core (ktc/cli,
ktc/plugin) imports no implementation family, only the registry and the layers ARCHITECTURE.md lists."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALLOWED_FROM_REFERENCE = {"reference.types"}


MAPPED = ("specs", "reference", "strategies", "implementations", "reports", "examples", "suites", "expectations")


def folder_name(module: str) -> str:
    """``ktc.reference.types`` -> ``reference.types``: the rules below speak of the clone's top-level folders."""
    head, _, rest = module.partition(".")
    return rest if head == "ktc" and rest.split(".")[0] in MAPPED else module


def imports(path: Path) -> set[str]:
    return {folder_name(m) for m in raw_imports(path)}


def raw_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = {f"{node.module}.{a.name}" for a in node.names}
            found |= names if node.module == "ktc" else {node.module} | names
    return found


IMPLEMENTATION_FILES = [p for p in (ROOT / "implementations").rglob("*.py") if p.name != "reference.py"]


@pytest.mark.parametrize("path", IMPLEMENTATION_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_implementation_never_imports_reference_rules(path):
    bad = {m for m in imports(path) if m.split(".")[0] == "reference"
           and m not in ALLOWED_FROM_REFERENCE and not m.startswith("reference.types.")}
    assert not bad, f"{path.name} imports reference rule logic: {sorted(bad)}"


SPARK_USERS = {"implementations", "ktc/spark", "ktc/audit", "ktc/cli/audit_run.py"}


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
TOOLKIT = ROOT / "ktc" / "kafka"
# The Kafka toolkit (ktc/kafka/): the client knows nothing of processes, and no part of the toolkit knows
# an implementation under test or ktc's judging (the adapters use the toolkit, never the reverse).
TOOLKIT_FORBIDDEN = {"client": {"processes", "implementations", "ktc.judge", "ktc.plugin", "ktc.cli"},
                     "processes": {"implementations", "ktc.judge", "ktc.plugin", "ktc.cli"},
                     ".": {"implementations", "ktc.judge", "ktc.plugin", "ktc.cli"}}


def toolkit_imports(path: Path) -> set[str]:
    """What a toolkit module imports: its sibling folders (``client``, ``processes``) however it names them,
    other packages by their first name, and ktc's own subpackages as ``ktc.<name>``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level:
            target = path.parent.joinpath(*[".."] * (node.level - 1), *node.module.split("."))
            found.add(target.resolve().relative_to(TOOLKIT).parts[0])
        else:
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found |= {toolkit_name(name) for name in names}
    return found


def toolkit_name(module: str) -> str:
    parts = module.split(".")
    if parts[:2] == ["ktc", "kafka"] and len(parts) > 2:
        return parts[2]
    return ".".join(parts[:2]) if parts[0] == "ktc" else parts[0]


@pytest.mark.parametrize("folder", sorted(TOOLKIT_FORBIDDEN))
def test_toolkit_folders_import_only_downwards(folder):
    paths = TOOLKIT.glob("*.py") if folder == "." else (TOOLKIT / folder).rglob("*.py")
    for path in paths:
        bad = toolkit_imports(path) & TOOLKIT_FORBIDDEN[folder]
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


@pytest.mark.parametrize("package", [KAFKA, TOOLKIT], ids=["implementations/kafka", "ktc/kafka"])
def test_no_import_circle_between_kafka_modules(package):
    graph = {p: {q for q in local_targets(p)} for p in package.rglob("*.py")}
    for start in graph:
        seen, stack = set(), list(graph[start])
        while stack:
            node = stack.pop()
            assert node != start, f"import circle through {start.relative_to(ROOT)}"
            if node not in seen:
                seen.add(node)
                stack.extend(graph.get(node, ()))


def local_targets(path: Path) -> set[Path]:
    """The modules of its own package ``path`` imports relatively (lazy imports inside functions included)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            target = base.joinpath(*node.module.split("."))
            out |= {p for p in (target.with_suffix(".py"), target / "__init__.py") if p.exists()}
    return out


# ktc's generic core knows no implementation family: ktc/cli and ktc/plugin (and ktc/hunt) reach the families only
# through the registry (implementations/__init__.py; each family's plug-in is in implementations/families/) and the
# protocol.
CORE = ("ktc/cli", "ktc/plugin", "ktc/hunt")
CORE_MAY_IMPORT = ("implementations", "implementations.protocol", "specs", "reports", "reference", "ktc", "ktc.paths",
                   "ktc.environment",
                   "ktc.judge", "ktc.checks", "ktc.kafka", "ktc.spark", "ktc.cli", "ktc.plugin", "ktc.audit",
                   "ktc.hunt", "strategies")
EXACT = {"implementations", "ktc"}  # these packages themselves, not what lies under them
FIRST_PARTY = {"ktc", "implementations", "specs", "reference", "strategies", "reports", "suites", "mutation",
               "examples", "expectations", "benchmarks"}


def module_of(name: str) -> str:
    """The module an imported name is: ``implementations.SettingError`` -> ``implementations``, while
    ``implementations.kafka`` stays (a package of this tree)."""
    parts, found = name.split("."), []
    for part in parts:
        where = ROOT.joinpath(*found, part)
        if not (where.is_dir() or where.with_suffix(".py").exists()):
            break
        found.append(part)
    return ".".join(found)


def allowed_in_core(module: str) -> bool:
    return any(module == ok or (ok not in EXACT and module.startswith(ok + ".")) for ok in CORE_MAY_IMPORT)


def core_violations(path: Path, package: str | None = None) -> set[str]:
    """The modules ``path`` imports that ktc's core may not (``package``: where ``path`` sits, for relative imports;
    default: where it is in the tree)."""
    package = package if package is not None else ".".join(path.relative_to(ROOT).parts[:-1])
    modules = {module_of(m) for m in imports_anywhere(path, package) if m.split(".")[0] in FIRST_PARTY}
    return {m for m in modules if not allowed_in_core(m)}


def imports_anywhere(path: Path, package: str) -> set[str]:
    """Absolute imports of ``path``, lazy ones inside functions included; relative ones resolved to names."""
    found = imports(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            parts = package.split(".")
            module = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            found |= {module} | {f"{module}.{a.name}" for a in node.names}
    return found


@pytest.mark.parametrize("path", [p for folder in CORE for p in sorted((ROOT / folder).rglob("*.py"))],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_the_generic_core_imports_no_implementation_family(path):
    bad = core_violations(path)
    assert not bad, (f"{path.relative_to(ROOT)} imports {sorted(bad)}: ktc/cli and ktc/plugin may import only "
                     f"{', '.join(CORE_MAY_IMPORT)} (ARCHITECTURE.md); reach a family through its plug-in")


REFUSED = ["from implementations.kafka.adapter import KafkaImplementation", "import implementations.spark",
           "from implementations import kafka", "from implementations.families import bootstrap",
           "def f():\n    from implementations.kafka.judge import clocked", "from suites.selftest import doubles"]
ALLOWED = ["import implementations", "from implementations import SettingError, load",
           "from ktc.implementations.protocol import Capabilities", "from ktc.kafka.client import wire",
           "from ktc.spark import session", "from specs.profiles import names", "from . import hooks",
           "from ..judge import harness", "from ..kafka import discovery"]


@pytest.mark.parametrize("line", REFUSED + ALLOWED)
def test_the_core_rule_sees_a_family_import_however_it_is_written(line, tmp_path):
    """The rule above, on a file of ktc/plugin holding one import it must refuse or let through."""
    probe = tmp_path / "probe.py"
    probe.write_text(line + "\n")
    bad = core_violations(probe, package="ktc.plugin")
    assert bool(bad) == (line in REFUSED), f"{line!r}: {sorted(bad)}"


def test_the_spark_toolkit_imports_no_implementation_and_no_core():
    for path in (ROOT / "ktc" / "spark").rglob("*.py"):
        bad = {m for m in imports(path) if m.split(".")[0] == "implementations"
               or m.startswith(("ktc.judge", "ktc.plugin", "ktc.cli"))}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"
