"""A broker target is a declaration (implementations/kafka/target.py), judged by the one adapter: no class
subclasses ``BrokerAdapter``, every built-in broker is a ``BrokerTarget`` the registry hands to it, and a third
party declares a broker in one file plus its expectations, found through the ``ktc.plugins`` entry points (or
named as ``module:ATTR``) without a line of ktc changed (suites/third_party.py).  No broker is started here:
suites/broker/test_third_party.py runs the third party's on kfake."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import pytest

from ktc import implementations
from ktc.cli.commands import main
from ktc.implementations.families import bootstrap, kafka
from ktc.implementations.kafka.adapter import BrokerAdapter
from ktc.implementations.kafka.target import BrokerTarget
from ktc.suites import third_party

ROOT = Path(__file__).resolve().parents[2]
BROKERS = ("kafka", "kafka-3.9", "kafka-4", "kfake", "tansu", "kafka-container", "kafka-cluster")


def every_class_of_the_implementations() -> list[type]:
    package = importlib.import_module("ktc.implementations")
    modules = [
        importlib.import_module(m.name)
        for m in pkgutil.walk_packages(package.__path__, "ktc.implementations.")
        if not m.name.endswith("__main__")
    ]
    return [cls for module in modules for _, cls in inspect.getmembers(module, inspect.isclass)]


def test_no_class_of_the_implementations_subclasses_the_broker_adapter():
    classes = every_class_of_the_implementations()
    assert BrokerAdapter in classes and len(classes) > 50
    assert [c for c in classes if issubclass(c, BrokerAdapter) and c is not BrokerAdapter] == []
    assert BrokerAdapter.__subclasses__() == []


def test_no_class_in_the_tree_names_the_broker_adapter_as_its_base():
    """Beyond what is imported: the suites, benchmarks and tools too (a test double that subclasses it
    would hide that the adapter cannot be composed)."""
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for folder in ("ktc", "implementations", "suites", "benchmarks", "mutation", "examples")
        for path in (ROOT / folder).rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef) and any("BrokerAdapter" in ast.unparse(b) for b in node.bases)
    ]
    assert found == []


@pytest.mark.parametrize("name", BROKERS)
def test_each_built_in_broker_is_a_declaration_the_one_adapter_judges(name):
    declared = implementations.builtins()[name]
    impl = implementations.load(name)
    assert isinstance(declared, BrokerTarget) and isinstance(declared, implementations.Declaration)
    assert type(impl) is BrokerAdapter and impl.declaration is declared
    assert impl.xdist_group == impl.name and impl.capabilities().profiles


def test_kafka_is_the_started_broker_unless_an_address_is_given_then_the_broker_there():
    started, by_address = implementations.load("kafka"), implementations.load("kafka", {"kafka_bootstrap": "h:9092"})
    assert started.declaration is kafka.KAFKA and not started.external and started.name.startswith("kafka-3.")
    assert by_address.declaration is bootstrap.TARGET and by_address.external and by_address.probes
    assert (by_address.name, by_address.version, by_address.describe()) == (
        "kafka",
        "external h:9092",
        "a broker at h:9092",
    )


def test_a_release_by_its_pattern_is_the_started_kafka_at_that_version():
    impl = implementations.load("kafka-3.7.2")
    assert (impl.name, impl.version, impl.declaration.start) == ("kafka-3.7.2", "3.7.2", kafka.KAFKA.start)
    assert impl.profile() == "kafka-3.7" and impl.waits_at_start_s == 30.0  # before 3.8: its first retention pass


def test_a_declaration_s_settings_are_read_once_from_the_options_and_the_environment():
    impl = kafka.KAFKA.implementation(
        {"kafka_version": "3.8.1", "kafka_clock": "host"}, {"KTC_KAFKA_CHUNK": "7", "KTC_KAFKA_BROKER_CONFIG": "a=1"}
    )
    assert (impl.settings.version, impl.settings.clock, impl.settings.tuning.chunk) == ("3.8.1", "host", 7)
    assert dict(impl.settings.broker_config) == {"a": "1"} and impl.launcher.settings is impl.settings
    with pytest.raises(ValueError, match="KTC_KAFKA_DEPTH='0': expected a positive whole number"):
        kafka.KAFKA.implementation({}, {"KTC_KAFKA_DEPTH": "0"})


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """The third party's file and distribution on the path, as ``pip install`` would leave them."""
    expectations = third_party.install(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    implementations.plugins.cache_clear()
    yield expectations
    implementations.plugins.cache_clear()
    sys.modules.pop(third_party.MODULE, None)


def test_a_third_party_broker_is_one_file_found_through_its_entry_point(installed):
    assert third_party.NAME in implementations.builtins()
    assert implementations.plugins()[-1].family == third_party.NAME  # after ktc's own
    impl = implementations.load(third_party.NAME)
    assert type(impl) is BrokerAdapter and impl.name == third_party.NAME == impl.xdist_group
    caps = impl.capabilities()
    assert caps.profiles == {"kafka-4"} and "KIP-33.list-offsets-earliest-pending-upload" in caps.unsupported
    assert impl.target()["evidence"] == "kfake-again follows the newest Apache Kafka"


def test_a_third_party_s_expectations_are_the_file_beside_its_declaration(installed):
    impl = implementations.load(third_party.NAME)
    assert implementations.expectation_files(third_party.NAME, impl.name, impl.version) == [installed]
    assert f'implementation = "{third_party.NAME}"' in installed.read_text()
    assert implementations.expectation_files("kfake", "kfake", impl.version) == []  # ktc's own: read anyway


def test_a_declaration_needs_no_family_when_named_as_module_attr(installed):
    impl = implementations.load(f"{third_party.MODULE}:TARGET")
    assert type(impl) is BrokerAdapter and impl.name == third_party.NAME


def entry_point(folder: Path, name: str, module: str, source: str) -> None:
    (folder / f"{module}.py").write_text(source)
    dist = folder / f"{module}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[ktc.plugins]\n{name} = {module}:PLUGIN\n")


@pytest.mark.parametrize(
    "source, said",
    [
        ("raise RuntimeError('half-written')", "cannot be loaded: RuntimeError: half-written"),
        ("PLUGIN = 42", "is not a ktc.implementations.Plugin"),
        ("from ktc.implementations.families.kfake import PLUGIN", "declares kfake, a name already taken"),
    ],
)
def test_a_plug_in_that_breaks_or_takes_a_name_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, source, said):
    entry_point(tmp_path, "broken", "ktc_broken_plugin", source)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    implementations.plugins.cache_clear()
    try:
        code = main(["run", "--impl", "reference"])
    finally:
        implementations.plugins.cache_clear()
        sys.modules.pop("ktc_broken_plugin", None)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and said in err and "ktc_broken_plugin" in err, err
